#include "ingest/workload_manifest.h"

#include <capnp/message.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "ingest/ingester.h"
#include "ingest/projector.h"
#include "ingest/value_reader.h"

namespace ledger::ingest {

namespace {

constexpr const char* kQueueLabel = "kueue.x-k8s.io/queue-name";

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string stringAt(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* cur = &j;
  for (const char* k : path) {
    cur = member(*cur, k);
    if (cur == nullptr) return "";
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

// Job's parallelism and completions are int32: a value past that is refused
// with its name, never cast into a wrapped count.
std::int64_t intOr(const nlohmann::json& spec, const char* key, std::int64_t fallback) {
  const nlohmann::json* v = member(spec, key);
  if (v == nullptr || !v->is_number_integer()) return fallback;
  const bool fits = v->is_number_unsigned() ? v->get<std::uint64_t>() <= INT32_MAX
                                            : v->get<std::int64_t>() >= INT32_MIN &&
                                                  v->get<std::int64_t>() <= INT32_MAX;
  if (!fits) {
    throw std::runtime_error(std::string("spec.") + key + " " + v->dump() +
                             " is outside the int32 range");
  }
  return v->get<std::int64_t>();
}

// metadata.name, else metadata.generateName without its trailing '-': the
// API server names such an object generateName + a random suffix, which a
// manifest does not have (Kueue's samples create their Jobs this way).
std::string manifestName(const nlohmann::json& object) {
  std::string name = stringAt(object, {"metadata", "name"});
  if (!name.empty()) return name;
  name = stringAt(object, {"metadata", "generateName"});
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

bool isWorkloadOrJob(const nlohmann::json& object) {
  const std::string apiVersion = stringAt(object, {"apiVersion"});
  const std::string kind = stringAt(object, {"kind"});
  return (kind == "Job" && apiVersion == "batch/v1") ||
         (kind == "Workload" && apiVersion.rfind("kueue.x-k8s.io/", 0) == 0);
}

// What the DRA charge reads of the cluster (replay/dra) that a manifest may
// bring along with its workload.
bool isClusterObject(const nlohmann::json& object) {
  const std::string kind = stringAt(object, {"kind"});
  return stringAt(object, {"apiVersion"}).rfind("resource.k8s.io/", 0) == 0 &&
         (kind == "ResourceClaimTemplate" || kind == "DeviceClass");
}

std::string describe(const nlohmann::json& object) {
  const std::string kind = stringAt(object, {"kind"});
  const std::string ns = stringAt(object, {"metadata", "namespace"});
  const std::string name = manifestName(object);
  return (kind.empty() ? std::string("an object without kind") : kind) + " " +
         (ns.empty() ? "" : ns + "/") + name;
}

// The objects a decoded value stands for: a watch event's object, a List's
// items (taking apiVersion and kind from the list, as ingest does), or the
// value itself.
std::vector<nlohmann::json> objectsOf(nlohmann::json value) {
  if (const nlohmann::json* inner = member(value, "object");
      inner != nullptr && member(value, "type")) {
    return {*inner};
  }
  const std::string kind = stringAt(value, {"kind"});
  const nlohmann::json* items = member(value, "items");
  if (kind.size() > 4 && kind.ends_with("List") && items != nullptr && items->is_array()) {
    std::vector<nlohmann::json> out;
    for (nlohmann::json item : *items) {
      if (item.is_object() && !item.contains("kind"))
        item["kind"] = kind.substr(0, kind.size() - 4);
      if (item.is_object() && !item.contains("apiVersion") && member(value, "apiVersion"))
        item["apiVersion"] = value["apiVersion"];
      out.push_back(std::move(item));
    }
    return out;
  }
  return {std::move(value)};
}

kj::Array<capnp::word> toWords(const std::string& bytes) {
  auto words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), words.size() * sizeof(capnp::word));
  return words;
}

// The Workload to evaluate: a Job converted, the namespace defaulted, a
// generateName taken as the name.
nlohmann::json normalizedWorkload(nlohmann::json object) {
  const std::string apiVersion = stringAt(object, {"apiVersion"});
  const std::string kind = stringAt(object, {"kind"});
  if (kind == "Job" && apiVersion == "batch/v1") {
    object = workloadForJob(object);
  } else if (kind != "Workload" || apiVersion.rfind("kueue.x-k8s.io/", 0) != 0) {
    throw std::runtime_error("expected a kueue.x-k8s.io Workload or a batch/v1 Job, got " +
                             (kind.empty() ? std::string("an object without kind") : kind));
  }
  if (!member(object, "metadata") || !member(object, "metadata")->is_object()) {
    object["metadata"] = nlohmann::json::object();
  }
  nlohmann::json& meta = object["metadata"];
  if (stringAt(object, {"metadata", "namespace"}).empty()) meta["namespace"] = "default";
  if (stringAt(object, {"metadata", "name"}).empty()) {
    const std::string generated = manifestName(object);
    if (generated.empty()) throw std::runtime_error("the object has no metadata.name");
    meta["name"] = generated;
  }
  return object;
}

kj::Array<capnp::word> recordOfWorkload(const nlohmann::json& object) {
  std::string rejection;
  const std::string bytes = projectObject(object, {}, &rejection);
  // What ingest would refuse to record (a count outside its range) is not
  // evaluated either.
  if (!rejection.empty()) throw std::runtime_error(rejection);
  Record header;
  header.identity.group = "kueue.x-k8s.io";
  header.identity.version = "v1beta2";
  header.identity.kind = "Workload";
  header.identity.namespace_ = stringAt(object, {"metadata", "namespace"});
  header.identity.name = stringAt(object, {"metadata", "name"});
  header.identity.uid = stringAt(object, {"metadata", "uid"});
  return toWords(buildProjectedRecord(header, bytes));
}

}  // namespace

nlohmann::json workloadForJob(const nlohmann::json& job) {
  std::string queue = stringAt(job, {"metadata", "labels", kQueueLabel});
  if (queue.empty()) queue = stringAt(job, {"metadata", "annotations", kQueueLabel});
  if (queue.empty()) {
    throw std::runtime_error(std::string("the Job has no ") + kQueueLabel +
                             " label, so Kueue would not manage it");
  }
  const nlohmann::json* spec = member(job, "spec");
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& s = spec != nullptr ? *spec : empty;
  // Job.podsCount: parallelism (defaulted to 1), capped by completions.
  std::int64_t count = intOr(s, "parallelism", 1);
  if (const nlohmann::json* c = member(s, "completions"); c != nullptr && c->is_number_integer()) {
    count = std::min(count, intOr(s, "completions", count));
  }
  nlohmann::json tmpl = nlohmann::json::object();
  if (const nlohmann::json* t = member(s, "template"); t != nullptr && t->is_object()) tmpl = *t;
  const std::string jobName = manifestName(job);
  if (jobName.empty()) throw std::runtime_error("the Job has no metadata.name or generateName");
  nlohmann::json meta = {{"name", "job-" + jobName},
                         {"namespace", stringAt(job, {"metadata", "namespace"})}};
  if (const std::string created = stringAt(job, {"metadata", "creationTimestamp"});
      !created.empty()) {
    meta["creationTimestamp"] = created;
  }
  return nlohmann::json{
      {"apiVersion", "kueue.x-k8s.io/v1beta2"},
      {"kind", "Workload"},
      {"metadata", meta},
      {"spec",
       {{"queueName", queue},
        {"podSets",
         nlohmann::json::array({{{"name", "main"}, {"count", count}, {"template", tmpl}}})}}}};
}

WorkloadManifest loadWorkloadManifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  ValueReader reader(in);
  DecodedValue v;
  WorkloadManifest out;
  nlohmann::json workload;
  std::vector<std::string> workloads;  // what each Workload or Job is, and where
  while (reader.next(&v)) {
    if (!v.error.empty()) {
      throw std::runtime_error(path + ":" + std::to_string(v.line) + ": " + v.error);
    }
    for (nlohmann::json& object : objectsOf(std::move(v.value))) {
      if (!object.is_object()) continue;
      if (isWorkloadOrJob(object)) {
        workloads.push_back(describe(object) + " (line " + std::to_string(v.line) + ")");
        if (workloads.size() == 1) workload = std::move(object);
      } else if (isClusterObject(object) && !stringAt(object, {"metadata", "name"}).empty()) {
        nlohmann::json& meta = object["metadata"];
        if (stringAt(object, {"kind"}) == "DeviceClass") {
          meta.erase("namespace");  // cluster-scoped: kubectl ignores one
        } else if (stringAt(object, {"metadata", "namespace"}).empty()) {
          // kubectl apply puts a namespaced object without a namespace where
          // the Job goes when it has none: the context's, "default" here.
          meta["namespace"] = "default";
        }
        out.clusterObjects.push_back(std::move(object));
      } else {
        out.ignored.push_back(describe(object));
      }
    }
  }
  if (workloads.empty()) {
    std::string found;
    for (const auto& o : out.ignored) found += (found.empty() ? "" : ", ") + o;
    throw std::runtime_error(path + ": no kueue.x-k8s.io Workload or batch/v1 Job in the file" +
                             (found.empty() ? std::string() : " (it holds " + found + ")"));
  }
  if (workloads.size() > 1) {
    std::string all;
    for (const auto& w : workloads) all += (all.empty() ? "" : ", ") + w;
    throw std::runtime_error(path + ": " + std::to_string(workloads.size()) +
                             " Workloads or Jobs in the file (" + all +
                             "); admit evaluates one: give a file with exactly one");
  }
  try {
    const nlohmann::json normalized = normalizedWorkload(std::move(workload));
    out.ns = stringAt(normalized, {"metadata", "namespace"});
    out.name = stringAt(normalized, {"metadata", "name"});
    out.workloadRecord = recordOfWorkload(normalized);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return out;
}

kj::Array<capnp::word> workloadRecord(nlohmann::json object) {
  return recordOfWorkload(normalizedWorkload(std::move(object)));
}

kj::Array<capnp::word> clusterObjectRecord(const nlohmann::json& object, std::uint64_t seq,
                                           std::int64_t timeNs) {
  Record header;
  header.seq = seq;
  header.timeNs = timeNs;
  header.type = EventType::kModified;
  header.identity = identityOf(object);
  return toWords(buildProjectedRecord(header, projectObject(object)));
}

std::string describeManifestObject(const nlohmann::json& object) { return describe(object); }

}  // namespace ledger::ingest
