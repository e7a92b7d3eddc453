#include "ingest/kube/snapshot_tracker.h"

#include "ingest/kube/watch_message.h"
#include "schema/k8s/rfc3339.h"
#include "schema/observation.h"

namespace ledger::kube {

namespace {

using SnapshotJson = nlohmann::json;

SnapshotJson snapshotObject(const std::string& name, const char* resourceVersion) {
  return SnapshotJson{
      {"apiVersion", observation::kApiVersion},
      {"kind", observation::kSnapshotKind},
      {"metadata", {{"name", name}, {"uid", name}, {"resourceVersion", resourceVersion}}}};
}

}  // namespace

bool SnapshotTracker::isWorkloads(const std::string& id) {
  static const std::string prefix = "kueue.x-k8s.io/workloads";
  return id.compare(0, prefix.size(), prefix) == 0 &&
         (id.size() == prefix.size() || id[prefix.size()] == '/');
}

void SnapshotTracker::expect(const std::set<std::string>& ids, Clock::time_point now) {
  expected_.insert(ids.begin(), ids.end());
  waitUntil_ = now + wait_;
}

void SnapshotTracker::settled(const std::string& id) { expected_.erase(id); }

std::optional<SnapshotJson> SnapshotTracker::begin(const std::string& id, std::int64_t nowNs,
                                                   std::uint64_t firstSeq, Clock::time_point now) {
  expected_.erase(id);
  std::optional<SnapshotJson> added;
  if (!open_) {
    open_.emplace();
    open_->name = "snapshot-" + std::to_string(firstSeq);
    open_->firstSeq = firstSeq;
    open_->startedNs = nowNs;
    if (!waitUntil_ || *waitUntil_ < now + wait_) waitUntil_ = now + wait_;
    added = snapshotObject(open_->name, "1");
  }
  open_->listing.insert(id);
  open_->listed.erase(id);  // a LIST started again from its beginning
  if (added) {
    std::vector<std::string> ids(open_->listing.begin(), open_->listing.end());
    for (const auto& e : expected_) ids.push_back(e);
    (*added)["spec"] = {{"reason", std::string(observation::kReasonFirstSync)},
                        {"startedAt", formatRfc3339(nowNs)},
                        {"resources", ids}};
  }
  return added;
}

void SnapshotTracker::setFirstSeq(std::uint64_t seq) {
  if (open_) open_->firstSeq = seq;
}

void SnapshotTracker::noteGap(const std::string& id, std::int64_t fromNs, std::int64_t toNs,
                              std::string reason) {
  if (!open_) return;
  open_->reason = std::string(observation::kReasonRelist);
  open_->gaps[id] = Gap{fromNs, toNs, std::move(reason)};
}

std::optional<std::int64_t> SnapshotTracker::gapFrom(const std::string& id) const {
  if (!open_) return std::nullopt;
  auto it = open_->gaps.find(id);
  if (it == open_->gaps.end()) return std::nullopt;
  return it->second.fromNs;
}

void SnapshotTracker::ended(const std::string& id, const std::string& resourceVersion,
                            std::uint64_t objects, std::uint64_t deleted) {
  expected_.erase(id);
  if (!open_) return;
  open_->listing.erase(id);
  open_->listed[id] = Listed{resourceVersion, objects, deleted};
}

bool SnapshotTracker::othersOutstanding() const {
  for (const auto& id : expected_) {
    if (!isWorkloads(id)) return true;
  }
  if (open_) {
    for (const auto& id : open_->listing) {
      if (!isWorkloads(id)) return true;
    }
  }
  return false;
}

bool SnapshotTracker::defers(const std::string& id, Clock::time_point now) const {
  if (!isWorkloads(id)) return false;
  if (waitUntil_ && now >= *waitUntil_) return false;
  return othersOutstanding();
}

void SnapshotTracker::defer(WatchMessage message) { deferred_.push_back(std::move(message)); }

std::deque<WatchMessage> SnapshotTracker::releasable(Clock::time_point now) {
  std::deque<WatchMessage> out;
  if (deferred_.empty()) return out;
  if (othersOutstanding() && !(waitUntil_ && now >= *waitUntil_)) return out;
  out.swap(deferred_);
  return out;
}

bool SnapshotTracker::canClose(Clock::time_point now, bool force) const {
  if (!open_ || !deferred_.empty()) return false;
  if (force) return true;
  // Past the wait, LISTs that never began are missing; one that began is
  // still waited for (its items are already in the bracket).
  const bool late = waitUntil_ && now >= *waitUntil_;
  return open_->listing.empty() && (expected_.empty() || late);
}

std::deque<WatchMessage> SnapshotTracker::releaseAll() {
  std::deque<WatchMessage> out;
  out.swap(deferred_);
  return out;
}

void SnapshotTracker::expire(Clock::time_point now) {
  if (open_ || !waitUntil_ || now < *waitUntil_) return;
  expected_.clear();
  waitUntil_.reset();
}

std::optional<SnapshotJson> SnapshotTracker::closing(std::uint64_t lastSeq, std::int64_t nowNs,
                                                     Clock::time_point now, bool force) {
  if (!canClose(now, force)) return std::nullopt;
  for (const auto& id : open_->listing) expected_.insert(id);
  SnapshotJson closed = snapshotObject(open_->name, "2");
  std::vector<std::string> ids;
  for (const auto& [id, l] : open_->listed) ids.push_back(id);
  closed["spec"] = {{"reason", open_->reason.empty() ? std::string(observation::kReasonFirstSync)
                                                     : open_->reason},
                    {"startedAt", formatRfc3339(open_->startedNs)},
                    {"resources", ids}};
  SnapshotJson resources = SnapshotJson::array();
  for (const auto& [id, l] : open_->listed) {
    resources.push_back({{"resource", id},
                         {"resourceVersion", l.resourceVersion},
                         {"objects", l.objects},
                         {"deleted", l.deleted}});
  }
  // One gap per start and reason: after a daemon restart every resource was
  // last known current at the same stop; it ends at the last of their
  // relists, moments apart.
  struct Merged {
    std::int64_t toNs = 0;
    std::vector<std::string> ids;
  };
  std::map<std::pair<std::int64_t, std::string>, Merged> grouped;
  for (const auto& [id, g] : open_->gaps) {
    Merged& m = grouped[{g.fromNs, g.reason}];
    m.toNs = std::max(m.toNs, g.toNs);
    m.ids.push_back(id);
  }
  SnapshotJson gaps = SnapshotJson::array();
  for (const auto& [k, m] : grouped) {
    gaps.push_back({{"from", formatRfc3339(k.first)},
                    {"to", formatRfc3339(m.toNs)},
                    {"resources", m.ids},
                    {"reason", k.second}});
  }
  closed["status"] = {{"firstSeq", open_->firstSeq},
                      {"lastSeq", lastSeq},
                      {"completedAt", formatRfc3339(nowNs)},
                      {"resources", resources},
                      {"missing", std::vector<std::string>(expected_.begin(), expected_.end())},
                      {"gaps", gaps}};
  expected_.clear();
  open_.reset();
  waitUntil_.reset();
  return closed;
}

std::optional<SnapshotTracker::Clock::time_point> SnapshotTracker::deadline() const {
  if (!open_ && expected_.empty() && deferred_.empty()) return std::nullopt;
  return waitUntil_;
}

}  // namespace ledger::kube
