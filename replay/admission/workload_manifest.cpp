#include "workload_manifest.h"

#include <capnp/message.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "projector.h"
#include "value_reader.h"

namespace ledger::replay::admission {

namespace {

using Json = nlohmann::json;

constexpr const char* kQueueLabel = "kueue.x-k8s.io/queue-name";

const Json* member(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string stringAt(const Json& j, std::initializer_list<const char*> path) {
  const Json* cur = &j;
  for (const char* k : path) {
    cur = member(*cur, k);
    if (cur == nullptr) return "";
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

std::int64_t intOr(const Json& spec, const char* key, std::int64_t fallback) {
  const Json* v = member(spec, key);
  return v != nullptr && v->is_number_integer() ? v->get<std::int64_t>() : fallback;
}

}  // namespace

Json workloadForJob(const Json& job) {
  std::string queue = stringAt(job, {"metadata", "labels", kQueueLabel});
  if (queue.empty()) queue = stringAt(job, {"metadata", "annotations", kQueueLabel});
  if (queue.empty()) {
    throw std::runtime_error(std::string("the Job has no ") + kQueueLabel +
                             " label, so Kueue would not manage it");
  }
  const Json* spec = member(job, "spec");
  const Json empty = Json::object();
  const Json& s = spec != nullptr ? *spec : empty;
  // Job.podsCount: parallelism (defaulted to 1), capped by completions.
  std::int64_t count = intOr(s, "parallelism", 1);
  if (const Json* c = member(s, "completions"); c != nullptr && c->is_number_integer()) {
    count = std::min(count, c->get<std::int64_t>());
  }
  Json tmpl = Json::object();
  if (const Json* t = member(s, "template"); t != nullptr && t->is_object()) tmpl = *t;
  Json meta = {{"name", "job-" + stringAt(job, {"metadata", "name"})},
               {"namespace", stringAt(job, {"metadata", "namespace"})}};
  if (const std::string created = stringAt(job, {"metadata", "creationTimestamp"});
      !created.empty()) {
    meta["creationTimestamp"] = created;
  }
  return Json{
      {"apiVersion", "kueue.x-k8s.io/v1beta2"},
      {"kind", "Workload"},
      {"metadata", meta},
      {"spec",
       {{"queueName", queue},
        {"podSets", Json::array({{{"name", "main"}, {"count", count}, {"template", tmpl}}})}}}};
}

std::unique_ptr<StoredObject> workloadObject(Json object) {
  const std::string apiVersion = stringAt(object, {"apiVersion"});
  const std::string kind = stringAt(object, {"kind"});
  if (kind == "Job" && apiVersion == "batch/v1") {
    object = workloadForJob(object);
  } else if (kind != "Workload" || apiVersion.rfind("kueue.x-k8s.io/", 0) != 0) {
    throw std::runtime_error("expected a kueue.x-k8s.io Workload or a batch/v1 Job, got " +
                             (kind.empty() ? std::string("an object without kind") : kind));
  }
  if (!member(object, "metadata") || !member(object, "metadata")->is_object()) {
    object["metadata"] = Json::object();
  }
  Json& meta = object["metadata"];
  if (stringAt(object, {"metadata", "namespace"}).empty()) meta["namespace"] = "default";
  if (stringAt(object, {"metadata", "name"}).empty()) {
    throw std::runtime_error("the object has no metadata.name");
  }
  const std::string bytes = ingest::projectObject(object);
  Record header;
  header.identity.group = "kueue.x-k8s.io";
  header.identity.version = "v1beta2";
  header.identity.kind = "Workload";
  header.identity.namespace_ = stringAt(object, {"metadata", "namespace"});
  header.identity.name = stringAt(object, {"metadata", "name"});
  header.identity.uid = stringAt(object, {"metadata", "uid"});
  const std::string record = buildProjectedRecord(header, bytes);
  auto words = kj::heapArray<capnp::word>(record.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), record.data(), words.size() * sizeof(capnp::word));
  // StoredObject copies the record.
  return std::make_unique<StoredObject>(0, words.asPtr());
}

std::unique_ptr<StoredObject> loadWorkloadManifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  ingest::ValueReader reader(in);
  ingest::DecodedValue v;
  while (reader.next(&v)) {
    if (!v.error.empty()) {
      throw std::runtime_error(path + ":" + std::to_string(v.line) + ": " + v.error);
    }
    Json object = std::move(v.value);
    // A watch event carries the object inside.
    if (const Json* inner = member(object, "object"); inner != nullptr && member(object, "type")) {
      object = *inner;
    }
    if (!object.is_object()) continue;
    try {
      return workloadObject(std::move(object));
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
  throw std::runtime_error(path + ": no object found");
}

}  // namespace ledger::replay::admission
