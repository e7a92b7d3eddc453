#include "ingest/object_time.h"

#include <string>

#include "schema/k8s/rfc3339.h"

namespace ledger::ingest {

namespace {

void consider(const nlohmann::json& holder, const char* field,
              std::optional<std::int64_t>& newest) {
  if (!holder.is_object()) return;
  auto it = holder.find(field);
  if (it == holder.end() || !it->is_string()) return;
  const auto t = tryParseRfc3339(it->get_ref<const std::string&>());
  if (t && (!newest || *t > *newest)) newest = t;
}

}  // namespace

std::optional<std::int64_t> objectChangeTime(const nlohmann::json& object, WatchEventType type) {
  std::optional<std::int64_t> newest;
  if (!object.is_object()) return newest;
  auto meta = object.find("metadata");
  if (meta != object.end() && meta->is_object()) {
    if (auto mf = meta->find("managedFields"); mf != meta->end() && mf->is_array()) {
      for (const nlohmann::json& entry : *mf) consider(entry, "time", newest);
    }
    consider(*meta, "deletionTimestamp", newest);
    if (type == WatchEventType::kAdded) consider(*meta, "creationTimestamp", newest);
  }
  auto status = object.find("status");
  if (status != object.end() && status->is_object()) {
    if (auto conds = status->find("conditions"); conds != status->end() && conds->is_array()) {
      for (const nlohmann::json& c : *conds) consider(c, "lastTransitionTime", newest);
    }
  }
  return newest;
}

}  // namespace ledger::ingest
