#include "k8s_json.h"

#include <cstdio>

namespace ledger::gen {

namespace {

// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm): no
// time zone database and no locale, so every machine prints the same bytes.
void civilFromDays(std::int64_t z, int* y, unsigned* m, unsigned* d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int>(static_cast<std::int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0));
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

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

std::string rfc3339(std::int64_t ns, bool millis) {
  const std::int64_t secs = floorDiv(ns, 1000000000);
  const std::int64_t days = floorDiv(secs, 86400);
  const std::int64_t rem = secs - days * 86400;
  int y;
  unsigned m, d;
  civilFromDays(days, &y, &m, &d);
  char buf[64];
  const int hh = static_cast<int>(rem / 3600), mm = static_cast<int>(rem / 60 % 60),
            ss = static_cast<int>(rem % 60);
  if (millis) {
    const int ms = static_cast<int>((ns - secs * 1000000000) / 1000000);
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", y, m, d, hh, mm, ss, ms);
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", y, m, d, hh, mm, ss);
  }
  return buf;
}

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
