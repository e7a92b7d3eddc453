#include "projector.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "ingester.h"
#include "project_kinds.h"
#include "rfc3339.h"
#include "yaml_json.h"

namespace ledger::ingest {

namespace {

constexpr const char* kKueueGroup = "kueue.x-k8s.io";
constexpr const char* kResourceGroup = "resource.k8s.io";
constexpr const char* kKueueConfigFile = "controller_manager_config.yaml";

std::string toBytes(capnp::MallocMessageBuilder& message) {
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

void projectBody(FieldReader& fr, const ObjectIdentity& id, const Json& obj,
                 schema::Projection::Body::Builder body) {
  const std::string& g = id.group;
  const std::string& k = id.kind;
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
      if (const Json* spec = fr.object(obj, "spec", "Pod")) {
        pod.setNodeName(fr.string(*spec, "nodeName", "spec"));
        projectPodSpec(fr, *spec, pod.initSpec());
      }
      if (const Json* status = fr.object(obj, "status", "Pod")) {
        pod.setPhase(fr.string(*status, "phase", "status"));
        if (const Json* rcs = fr.array(*status, "resourceClaimStatuses", "status")) {
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
      const Json* file = FieldReader::path(obj, {"data", kKueueConfigFile});
      if (file != nullptr && file->is_string()) {
        Json config;
        try {
          config = parseYamlDocument(file->get<std::string>());
        } catch (const std::exception& e) {
          fr.problem(std::string(kKueueConfigFile) + " is not valid YAML: " + e.what());
          body.initDraConfig();
          return;
        }
        projectMappings(fr, FieldReader::path(config, {"resources", "deviceClassMappings"}),
                        body.initDraConfig());
        return;
      }
    }
  } else if (g == "kueue.openshift.io" && k == "Kueue") {
    projectMappings(fr,
                    FieldReader::path(obj, {"spec", "config", "resources", "deviceClassMappings"}),
                    body.initDraConfig());
    return;
  } else if (g == "config.kueue.x-k8s.io" && k == "Configuration") {
    projectMappings(fr, FieldReader::path(obj, {"resources", "deviceClassMappings"}),
                    body.initDraConfig());
    return;
  }
  body.setOther();
}

}  // namespace

std::string projectObject(const Json& object) {
  capnp::MallocMessageBuilder message(1024);
  auto root = message.initRoot<schema::Projection>();
  FieldReader fr;
  const ObjectIdentity id = identityOf(object);
  if (const Json* meta = FieldReader::member(object, "metadata")) {
    if (auto t = tryParseRfc3339(fr.string(*meta, "creationTimestamp", "metadata"))) {
      root.setCreationNs(*t);
    }
    if (const Json* owners = fr.array(*meta, "ownerReferences", "metadata")) {
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
  projectBody(fr, id, object, root.getBody());
  if (!fr.problems().empty()) {
    auto l = root.initProblems(static_cast<unsigned>(fr.problems().size()));
    for (unsigned i = 0; i < l.size(); ++i) l.set(i, text(fr.problems()[i]));
  }
  return toBytes(message);
}

std::string projectJsonText(const std::string& objectJson) {
  Json object;
  try {
    object = Json::parse(objectJson);
  } catch (const Json::exception& e) {
    capnp::MallocMessageBuilder message;
    auto root = message.initRoot<schema::Projection>();
    root.initProblems(1).set(0, text(std::string("stored JSON does not parse: ") + e.what()));
    root.getBody().setOther();
    return toBytes(message);
  }
  return projectObject(object);
}

}  // namespace ledger::ingest
