#include "tools/generator/k8s_json.h"

#include "schema/k8s/rfc3339.h"

namespace ledger::gen {

namespace {

// The merge key the API server uses for items of a list of objects, if any.
const char* mergeKey(const std::string& list, const J& item) {
  if (!item.is_object()) return nullptr;
  if (list == "ownerReferences") return "uid";
  for (const char* key : {"name", "type"}) {
    auto it = item.find(key);
    if (it != item.end() && it->is_string()) return key;
  }
  return nullptr;
}

bool allScalars(const J& obj) {
  for (const auto& [k, v] : obj.items()) {
    if (v.is_structured()) return false;
  }
  return true;
}

// The API server prints a set's members sorted, so "." (the map or list item
// itself) comes first.
void addFields(const J& owned, J* out);

J fieldsOfValue(const std::string& key, const J& value) {
  J out = J::object();
  if (value.is_object()) {
    if (!value.empty() && allScalars(value)) out["."] = J::object();
    addFields(value, &out);
    return out;
  }
  if (!value.is_array() || value.empty()) return out;
  if (key == "finalizers") {  // a set of strings
    out["."] = J::object();
    for (const J& v : value) out["v:" + v.dump()] = J::object();
    return out;
  }
  for (const J& item : value) {
    const char* mk = mergeKey(key, item);
    if (mk == nullptr) return J::object();  // an atomic list
    J k = J::object();
    k[mk] = item[mk];
    J entry = J::object();
    entry["."] = J::object();
    addFields(item, &entry);
    out["k:" + k.dump()] = std::move(entry);
  }
  return out;
}

void addFields(const J& owned, J* out) {
  for (const auto& [key, value] : owned.items()) (*out)["f:" + key] = fieldsOfValue(key, value);
}

}  // namespace

std::string rfc3339(std::int64_t ns, bool millis) { return formatRfc3339Fixed(ns, millis ? 3 : 0); }

std::string cpuQuantity(std::int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string memQuantity(std::int64_t mebi) {
  if (mebi != 0 && mebi % 1024 == 0) return std::to_string(mebi / 1024) + "Gi";
  return std::to_string(mebi) + "Mi";
}

J fieldsV1(const J& owned) {
  J out = J::object();
  addFields(owned, &out);
  return out;
}

J managedEntry(const char* manager, const char* operation, const std::string& apiVersion,
               std::int64_t timeNs, const J& owned, const char* subresource) {
  J e = J::object();
  e["manager"] = manager;
  e["operation"] = operation;
  e["apiVersion"] = apiVersion;
  e["time"] = rfc3339(timeNs);
  e["fieldsType"] = "FieldsV1";
  e["fieldsV1"] = fieldsV1(owned);
  if (subresource != nullptr) e["subresource"] = subresource;
  return e;
}

J rawSlot(int i) {
  std::string slot = "\x01";
  slot += std::to_string(i);
  return slot;
}

std::string dumpWithRaw(const J& j, std::initializer_list<const std::string*> raws) {
  std::string out = j.dump();
  int i = 0;
  for (const std::string* raw : raws) {
    const std::string slot = "\"\\u0001" + std::to_string(i++) + "\"";
    const auto at = out.find(slot);
    if (at != std::string::npos) out.replace(at, slot.size(), *raw);
  }
  return out;
}

J ownedMetadata(const J& metadata) {
  J out = J::object();
  for (const auto& [key, value] : metadata.items()) {
    if (key == "name" || key == "namespace" || key == "uid" || key == "resourceVersion" ||
        key == "generation" || key == "creationTimestamp" || key == "managedFields") {
      continue;
    }
    out[key] = value;
  }
  return out;
}

}  // namespace ledger::gen
