#include "replay/kueue/wait_follower.h"

#include <algorithm>

namespace ledger::replay {

namespace {

std::int64_t requeuedTime(schema::Workload::Reader wl) {
  for (auto c : wl.getConditions()) {
    if (c.getType() == "Requeued") return c.getLastTransitionNs();
  }
  return 0;
}

std::string keyOf(schema::ProjectedRecord::Reader r) {
  auto id = r.getIdentity();
  return std::string(id.getNamespace().cStr()) + "/" + id.getName().cStr();
}

}  // namespace

// pkg/workload QueuedWaitTime, with a lost reservation as a requeue.
std::int64_t WaitFollower::Followed::queuedNs() const {
  return std::max({creationNs, requeuedNs, lostNs});
}

void WaitFollower::record(schema::ProjectedRecord::Reader r, const OnAdmission& onAdmission) {
  const auto body = r.getObject().getBody();
  if (body.isLocalQueue()) {
    const std::string key = keyOf(r);
    if (r.getType() == schema::EventType::DELETED) {
      localQueues_.erase(key);
    } else {
      localQueues_[key] = body.getLocalQueue().getClusterQueue().cStr();
    }
    return;
  }
  if (!body.isWorkload()) return;
  std::string key = keyOf(r);
  if (r.getType() == schema::EventType::DELETED) {
    workloads_.erase(key);
    return;
  }
  workload(std::move(key), r, onAdmission);
}

void WaitFollower::workload(std::string key, schema::ProjectedRecord::Reader r,
                            const OnAdmission& onAdmission) {
  const std::int64_t t = r.getTimeNs();
  auto wl = r.getObject().getBody().getWorkload();
  const std::string uid = r.getIdentity().getUid().cStr();
  auto [it, added] = workloads_.try_emplace(std::move(key));
  Followed& w = it->second;
  const bool fresh = added || w.uid != uid;
  if (fresh) {
    // A new object, or one deleted and created again under the name
    // between two records: its own creation starts its wait.
    w = Followed{};
    w.uid = uid;
    w.creationNs = r.getObject().getCreationNs() != 0 ? r.getObject().getCreationNs() : t;
  }
  const WorkloadConditions now = conditionsOf(wl);
  // The latest Requeued time seen: a writer that drops the condition at
  // admission (a status rewritten whole) does not undo the requeue.
  w.requeuedNs = std::max(w.requeuedNs, requeuedTime(wl));
  if (w.conditions.quotaReserved && !now.quotaReserved && !now.finished) w.lostNs = t;
  w.localQueue = wl.getQueueName().cStr();
  w.clusterQueue = wl.getAdmissionClusterQueue().cStr();
  // A workload first recorded already admitted was admitted before the
  // ledger observed it: its wait is not measured.
  if (!fresh && !w.conditions.admitted && now.admitted && onAdmission) {
    onAdmission(groupOf(it->first, w), std::max<std::int64_t>(0, t - w.queuedNs()), t);
  }
  w.conditions = now;
}

std::map<std::string, std::uint64_t> WaitFollower::pendingByGroup() const {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [key, w] : workloads_) {
    if (w.conditions.admitted || w.conditions.finished) continue;
    ++out[groupOf(key, w)];
  }
  return out;
}

std::string WaitFollower::groupOf(const std::string& key, const Followed& w) const {
  const std::string ns = key.substr(0, key.find('/'));
  switch (by_) {
    case WaitGrouping::kNamespace:
      return ns;
    case WaitGrouping::kLocalQueue:
      return ns + "/" + w.localQueue;
    case WaitGrouping::kClusterQueue:
      break;
  }
  if (!w.clusterQueue.empty()) return w.clusterQueue;
  auto lq = localQueues_.find(ns + "/" + w.localQueue);
  return lq == localQueues_.end() ? std::string() : lq->second;
}

}  // namespace ledger::replay
