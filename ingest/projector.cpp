#include "ingest/projector.h"

#include <capnp/message.h>

#include <stdexcept>

#include "ingest/json_numbers.h"
#include "ingest/project_kinds.h"
#include "ingest/yaml_json.h"
#include "ledger/scratch_message.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::ingest {

namespace {

constexpr const char* kKueueGroup = "kueue.x-k8s.io";
constexpr const char* kResourceGroup = "resource.k8s.io";
constexpr const char* kKueueConfigFile = "controller_manager_config.yaml";

// One message per thread for the projections, its first segment reused: a
// projection is built for every recorded object, and a fresh builder's
// calloc of its first segment was the reading thread's only memset. The
// projection's bytes are not stored as they
// are (the ledger copies the Projection into its ProjectedRecord), and they
// are the same anyway. projectObject does not call itself.
ScratchMessage& projectionMessage() {
  thread_local ScratchMessage message(1024);
  return message;
}

// The API group and kind, as identityOf() (ingester.h) reads them.
struct GroupKind {
  std::string_view group;
  std::string_view kind;
};

GroupKind groupKindOf(const Json& obj) {
  GroupKind out;
  const JsonPtr kind = obj.find("kind");
  if (kind && kind->is_string()) out.kind = kind->get<std::string_view>();
  const JsonPtr apiVersion = obj.find("apiVersion");
  if (apiVersion && apiVersion->is_string()) {
    out.group = splitApiVersion(apiVersion->get<std::string_view>()).group;
  }
  return out;
}

std::string_view metadataString(const Json& obj, const char* field) {
  JsonPtr v = FieldReader::path(obj, {"metadata", field});
  return v.has_value() && v->is_string() ? v->get<std::string_view>() : std::string_view();
}

// A Kueue configuration document's mappings, and where its controller runs:
// Kueue's Configuration.namespace, which Kueue defaults to kueue-system
// (apis/config/v1beta1 defaults.go, DefaultNamespace).
void projectConfiguration(FieldReader& fr, const Json& config, schema::DraConfig::Builder out) {
  projectMappings(fr, FieldReader::path(config, {"resources", "deviceClassMappings"}), out);
  JsonPtr ns = FieldReader::member(config, "namespace");
  out.setControllerNamespace(text(ns.has_value() && ns->is_string()
                                      ? ns->get<std::string_view>()
                                      : std::string_view("kueue-system")));
}

void projectBody(FieldReader& fr, const GroupKind& id, const Json& obj,
                 const ProjectionOptions& options, schema::Projection::Body::Builder body) {
  const std::string_view g = id.group;
  const std::string_view k = id.kind;
  if (g == kKueueGroup) {
    if (k == "Workload") return projectWorkload(fr, obj, body.initWorkload());
    if (k == "ClusterQueue") return projectClusterQueue(fr, obj, body.initClusterQueue());
    if (k == "Cohort") return projectCohort(fr, obj, body.initCohort());
    if (k == "LocalQueue") return projectLocalQueue(fr, obj, body.initLocalQueue());
    if (k == "ResourceFlavor") return projectResourceFlavor(fr, obj, body.initResourceFlavor());
  } else if (g == kResourceGroup) {
    if (k == "DeviceClass") return projectDeviceClass(fr, obj, body.initDeviceClass());
    if (k == "ResourceClaimTemplate") {
      return projectResourceClaimTemplate(fr, obj, body.initResourceClaimTemplate());
    }
    if (k == "ResourceClaim") return projectResourceClaim(fr, obj, body.initResourceClaim());
    if (k == "ResourceSlice") return projectResourceSlice(fr, obj, body.initResourceSlice());
  } else if (g.empty()) {
    if (k == "Pod") {
      auto pod = body.initPod();
      if (JsonPtr label = FieldReader::path(obj, {"metadata", "labels", "control-plane"});
          label.has_value() && label->is_string()) {
        pod.setControllerManagerLabel(label->get<std::string_view>() == "controller-manager");
      }
      if (JsonPtr spec = fr.object(obj, "spec", "Pod")) {
        pod.setNodeName(fr.string(*spec, "nodeName", "spec"));
        projectPodSpec(fr, *spec, pod.initSpec());
      }
      if (JsonPtr status = fr.object(obj, "status", "Pod")) {
        pod.setPhase(fr.string(*status, "phase", "status"));
        if (JsonPtr rcs = fr.array(*status, "resourceClaimStatuses", "status")) {
          auto l = pod.initResourceClaimStatuses(static_cast<unsigned>(rcs->size()));
          unsigned i = 0;
          for (const Json& s : *rcs) {
            l[i].setName(fr.string(s, "name", "resourceClaimStatuses"));
            l[i].setResourceClaimName(fr.string(s, "resourceClaimName", "resourceClaimStatuses"));
            ++i;
          }
        }
      }
      return;
    }
    if (k == "Namespace") {
      auto ns = body.initNamespace();
      fillStrings(fr, FieldReader::path(obj, {"metadata", "labels"}), "metadata.labels",
                  [&](unsigned n) { return ns.initLabels(n); });
      return;
    }
    if (k == "ConfigMap") {
      JsonPtr file = FieldReader::path(obj, {"data", kKueueConfigFile});
      if (file.has_value() && file->is_string()) {
        // Its own parser: `obj` lives in another document.
        simdjson::dom::parser parser;
        JsonPtr config;
        auto draConfig = body.initDraConfig();
        const std::string_view ns = metadataString(obj, "namespace");
        const std::string_view name = metadataString(obj, "name");
        const std::string_view source = options.kueueConfigMap;
        const bool configured = source.size() == ns.size() + 1 + name.size() &&
                                source.substr(0, ns.size()) == ns && source[ns.size()] == '/' &&
                                source.substr(ns.size() + 1) == name;
        draConfig.setIgnored(!configured);
        try {
          config = viewOfNlohmann(parseYamlDocument(file->get<std::string>()), parser);
        } catch (const std::exception& e) {
          fr.problem(std::string(kKueueConfigFile) + " is not valid YAML: " + e.what());
          draConfig.setControllerNamespace(text(ns));
          return;
        }
        projectConfiguration(fr, *config, draConfig);
        // The ConfigMap is mounted into the controller of its own namespace.
        draConfig.setControllerNamespace(text(ns));
        return;
      }
    }
  } else if (g == "kueue.openshift.io" && k == "Kueue") {
    auto draConfig = body.initDraConfig();
    projectMappings(fr,
                    FieldReader::path(obj, {"spec", "config", "resources", "deviceClassMappings"}),
                    draConfig);
    // The operator reads the singleton named `cluster` only, and runs Kueue
    // in its own namespace.
    draConfig.setIgnored(metadataString(obj, "name") != "cluster");
    draConfig.setControllerNamespace("openshift-kueue-operator");
    return;
  } else if (g == "config.kueue.x-k8s.io" && k == "Configuration") {
    projectConfiguration(fr, obj, body.initDraConfig());
    return;
  }
  body.setOther();
}

}  // namespace

std::string projectObject(const JsonView& object, const ProjectionOptions& options,
                          std::string* rejection) {
  ScratchMessage& message = projectionMessage();
  auto root = message.start().initRoot<schema::Projection>();
  FieldReader fr;
  if (JsonPtr meta = FieldReader::member(object, "metadata")) {
    if (auto t = fr.time(*meta, "creationTimestamp", "metadata")) {
      root.setCreationNs(*t);
    }
    if (JsonPtr owners = fr.array(*meta, "ownerReferences", "metadata")) {
      auto l = root.initOwnerReferences(static_cast<unsigned>(owners->size()));
      unsigned i = 0;
      for (const Json& o : *owners) {
        auto b = l[i++];
        b.setApiVersion(fr.string(o, "apiVersion", "ownerReferences"));
        b.setKind(fr.string(o, "kind", "ownerReferences"));
        b.setName(fr.string(o, "name", "ownerReferences"));
        b.setUid(fr.string(o, "uid", "ownerReferences"));
        b.setController(fr.boolean(o, "controller", "ownerReferences", false));
      }
    }
  }
  projectBody(fr, groupKindOf(object), object, options, root.getBody());
  if (!fr.problems().empty()) {
    auto l = root.initProblems(static_cast<unsigned>(fr.problems().size()));
    for (unsigned i = 0; i < l.size(); ++i) l.set(i, text(fr.problems()[i]));
  }
  if (rejection != nullptr) *rejection = fr.rejection();
  return message.bytes();
}

namespace {

std::string unreadable(const std::string& why) {
  ScratchMessage& message = projectionMessage();
  auto root = message.start().initRoot<schema::Projection>();
  root.initProblems(1).set(0, text(why));
  root.getBody().setOther();
  return message.bytes();
}

}  // namespace

std::string projectObject(const nlohmann::json& object, const ProjectionOptions& options,
                          std::string* rejection) {
  simdjson::dom::parser parser;
  std::optional<JsonView> view;
  try {
    view = viewOfNlohmann(object, parser);
  } catch (const std::runtime_error& e) {
    return unreadable(e.what());
  }
  return projectObject(*view, options, rejection);
}

std::string projectJsonText(const std::string& objectJson, const ProjectionOptions& options) {
  // Stored JSON is what nlohmann's dump() wrote (sorted keys, no duplicates,
  // no "-0", no escaped surrogates), which simdjson reads exactly.
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(objectJson).get(root) == simdjson::SUCCESS)
    return projectObject(JsonView(root), options);
  nlohmann::json object;
  try {
    object = parseJsonKeepingIntegers(objectJson);
  } catch (const nlohmann::json::exception& e) {
    return unreadable(std::string("stored JSON does not parse: ") + e.what());
  }
  return projectObject(object, options);
}

void checkKueueConfigMap(const std::string& namespacedName) {
  const auto slash = namespacedName.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == namespacedName.size() ||
      namespacedName.find('/', slash + 1) != std::string::npos) {
    throw std::invalid_argument("--kueue-config: '" + namespacedName + "' is not NAMESPACE/NAME");
  }
}

}  // namespace ledger::ingest
