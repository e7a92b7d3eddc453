#include "tools/serve/objects_at.h"

#include <kj/exception.h>
#include <algorithm>

#include "ledger/format.h"
#include "ledger/object_index.h"
#include "replay/fold/replayer.h"
#include "tools/serve/api_error.h"

namespace ledger::serve {

namespace {

// The folded kinds, by the group that defines them (the projector folds
// only these groups' objects into them: ingest/projector.cpp).
bool foldedKind(const ApiResource& r, replay::ObjectKind* kind) {
  using K = replay::ObjectKind;
  struct Entry {
    std::string_view group, kind;
    K folded;
  };
  static constexpr Entry kEntries[] = {
      {"kueue.x-k8s.io", "Workload", K::kWorkload},
      {"kueue.x-k8s.io", "ClusterQueue", K::kClusterQueue},
      {"kueue.x-k8s.io", "Cohort", K::kCohort},
      {"kueue.x-k8s.io", "LocalQueue", K::kLocalQueue},
      {"kueue.x-k8s.io", "ResourceFlavor", K::kResourceFlavor},
      {"", "Namespace", K::kNamespace},
      {"", "Pod", K::kPod},
      {"resource.k8s.io", "DeviceClass", K::kDeviceClass},
      {"resource.k8s.io", "ResourceClaimTemplate", K::kResourceClaimTemplate},
      {"resource.k8s.io", "ResourceClaim", K::kResourceClaim},
      {"resource.k8s.io", "ResourceSlice", K::kResourceSlice},
  };
  for (const auto& e : kEntries) {
    if (e.group == r.group && e.kind == r.kind) {
      *kind = e.folded;
      return true;
    }
  }
  return false;
}

std::vector<ObjectVersion> fromIndex(const Ledger& ledger, const ApiResource& r, std::uint64_t seq,
                                     std::string_view ns) {
  std::string prefix = "r" + r.group + "/" + r.kind + "/";
  if (!ns.empty()) prefix.append(ns).push_back('/');
  // The entries of one object list its records in seq order (format.h):
  // the last at or before `seq` wins.
  std::vector<ObjectVersion> out;
  std::string lastObject;
  std::vector<std::uint64_t> seqs;
  throwIfFailed(ledger.scanObjectIndex(prefix, [&](std::string_view key, std::string_view value) {
    std::string_view objectKey;
    std::uint64_t first = 0;
    seqs.clear();
    if (!parseRecordEntryKey(key, &objectKey, &first) || !decodeRecordEntry(first, value, seqs)) {
      throw ApiError::internal("object index entry is malformed: " +
                               std::string(key.substr(0, 64)));
    }
    const auto last = std::upper_bound(seqs.begin(), seqs.end(), seq);
    if (last == seqs.begin()) return;
    const std::uint64_t s = *(last - 1);
    if (objectKey != lastObject || out.empty()) {
      lastObject.assign(objectKey);
      // group "/" kind "/" namespace "/" name
      const std::string_view rest = objectKey.substr(r.group.size() + r.kind.size() + 2);
      const auto slash = rest.find('/');
      out.push_back({std::string(rest.substr(0, slash)), std::string(rest.substr(slash + 1)), s});
    } else {
      out.back().seq = s;
    }
  }));
  // Drop the objects whose last record is a deletion.
  std::vector<ObjectVersion> live;
  for (auto& v : out) {
    Record record;
    throwIfFailed(ledger.read(v.seq, &record));
    if (record.type != EventType::kDeleted) live.push_back(std::move(v));
  }
  return live;
}

}  // namespace

std::shared_ptr<const replay::ClusterState> StateCache::at(const Ledger& ledger,
                                                           std::uint64_t seq) {
  std::promise<std::shared_ptr<const replay::ClusterState>> promise;
  std::shared_future<std::shared_ptr<const replay::ClusterState>> future;
  bool mine = false;
  {
    std::lock_guard lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == seq) {
        entries_.splice(entries_.begin(), entries_, it);
        future = it->second;
        break;
      }
    }
    if (!future.valid()) {
      entries_.emplace_front(seq, promise.get_future().share());
      if (entries_.size() > capacity_) entries_.pop_back();
      future = entries_.front().second;
      mine = true;
    }
  }
  if (!mine) return future.get();
  try {
    auto state = std::make_shared<replay::ClusterState>(replay::Replayer(ledger).foldTo(seq));
    promise.set_value(state);
  } catch (const kj::Exception& e) {
    // Converted here: a kj::Exception may not cross threads (replayer.h).
    std::lock_guard lock(mu_);
    entries_.remove_if([&](const Entry& e2) { return e2.first == seq; });
    promise.set_exception(
        std::make_exception_ptr(ApiError::internal(replay::damagedObject(e).what())));
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    entries_.remove_if([&](const Entry& e2) { return e2.first == seq; });
    promise.set_exception(std::make_exception_ptr(ApiError::internal(e.what())));
  }
  return future.get();
}

std::vector<ObjectVersion> listObjects(const Ledger& ledger, StateCache& states,
                                       const ApiResource& resource, std::uint64_t seq,
                                       std::string_view ns) {
  replay::ObjectKind kind;
  if (!foldedKind(resource, &kind)) return fromIndex(ledger, resource, seq, ns);
  auto state = states.at(ledger, seq);
  std::vector<ObjectVersion> out;
  for (const auto& [key, object] : state->objects(kind)) {
    if (!ns.empty() && object->ns() != ns) continue;
    out.push_back({std::string(object->ns()), std::string(object->name()), object->seq()});
  }
  std::sort(out.begin(), out.end(), [](const ObjectVersion& a, const ObjectVersion& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  });
  return out;
}

Record readVersion(const Ledger& ledger, std::uint64_t seq) {
  Record record;
  throwIfFailed(ledger.read(seq, &record));
  return record;
}

}  // namespace ledger::serve
