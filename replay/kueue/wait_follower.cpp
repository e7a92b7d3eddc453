#include "replay/kueue/wait_follower.h"

#include <algorithm>
#include <vector>

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

std::string waitGroupOf(const WaitSample& s, WaitGrouping by) {
  switch (by) {
    case WaitGrouping::kNamespace:
      return s.ns;
    case WaitGrouping::kLocalQueue:
      return s.ns + "/" + s.localQueue;
    case WaitGrouping::kClusterQueue:
      break;
  }
  return s.clusterQueue;
}

void WaitFollower::record(schema::ProjectedRecord::Reader r, const OnAdmission& onAdmission) {
  if (!onAdmission) {
    follow(r, {});
    return;
  }
  follow(r, [&](const WaitSample& s) { onAdmission(waitGroupOf(s, by_), s.waitNs, s.atNs); });
}

void WaitFollower::follow(schema::ProjectedRecord::Reader r, const OnSample& onSample) {
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
  workload(std::move(key), r, onSample);
}

void WaitFollower::workload(std::string key, schema::ProjectedRecord::Reader r,
                            const OnSample& onSample) {
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
  if (!fresh && !w.conditions.admitted && now.admitted && onSample) {
    WaitSample s;
    s.ns = it->first.substr(0, it->first.find('/'));
    s.clusterQueue = clusterQueueOf(s.ns, w);
    s.localQueue = w.localQueue;
    s.waitNs = std::max<std::int64_t>(0, t - w.queuedNs());
    s.atNs = t;
    onSample(s);
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

std::string WaitFollower::clusterQueueOf(const std::string& ns, const Followed& w) const {
  if (!w.clusterQueue.empty()) return w.clusterQueue;
  auto lq = localQueues_.find(ns + "/" + w.localQueue);
  return lq == localQueues_.end() ? std::string() : lq->second;
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
  return clusterQueueOf(ns, w);
}

void WaitFollower::save(schema::WaitState::Builder out) const {
  std::vector<const std::pair<const std::string, Followed>*> workloads;
  for (const auto& entry : workloads_) workloads.push_back(&entry);
  std::sort(workloads.begin(), workloads.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  auto list = out.initWorkloads(static_cast<unsigned>(workloads.size()));
  unsigned i = 0;
  for (const auto* entry : workloads) {
    const Followed& w = entry->second;
    auto e = list[i++];
    e.setKey(entry->first);
    e.setUid(w.uid);
    e.setCreationNs(w.creationNs);
    e.setRequeuedNs(w.requeuedNs);
    e.setLostNs(w.lostNs);
    e.setQuotaReserved(w.conditions.quotaReserved);
    e.setAdmitted(w.conditions.admitted);
    e.setFinished(w.conditions.finished);
    e.setEvicted(w.conditions.evicted);
    e.setLocalQueue(w.localQueue);
    e.setClusterQueue(w.clusterQueue);
  }
  const std::map<std::string, std::string> queues(localQueues_.begin(), localQueues_.end());
  auto targets = out.initLocalQueues(static_cast<unsigned>(queues.size()));
  i = 0;
  for (const auto& [key, clusterQueue] : queues) {
    targets[i].setKey(key);
    targets[i++].setClusterQueue(clusterQueue);
  }
}

void WaitFollower::restore(schema::WaitState::Reader in) {
  workloads_.clear();
  localQueues_.clear();
  for (auto e : in.getWorkloads()) {
    Followed w;
    w.uid = e.getUid().cStr();
    w.creationNs = e.getCreationNs();
    w.requeuedNs = e.getRequeuedNs();
    w.lostNs = e.getLostNs();
    w.conditions.quotaReserved = e.getQuotaReserved();
    w.conditions.admitted = e.getAdmitted();
    w.conditions.finished = e.getFinished();
    w.conditions.evicted = e.getEvicted();
    w.localQueue = e.getLocalQueue().cStr();
    w.clusterQueue = e.getClusterQueue().cStr();
    workloads_.emplace(e.getKey().cStr(), std::move(w));
  }
  for (auto q : in.getLocalQueues())
    localQueues_.emplace(q.getKey().cStr(), q.getClusterQueue().cStr());
}

WaitsReport waitsReportOf(std::int64_t fromNs, std::int64_t toNs, WaitGrouping by,
                          std::map<std::string, WaitGroup>& groups, const WaitFollower& atEnd) {
  for (const auto& [group, pending] : atEnd.pendingByGroup()) groups[group].stillPending = pending;
  WaitsReport out;
  out.fromNs = fromNs;
  out.toNs = toNs;
  out.by = by;
  for (auto& [key, group] : groups) {
    group.key = key;
    std::sort(group.waitsNs.begin(), group.waitsNs.end());
    out.groups.push_back(std::move(group));
  }
  return out;
}

}  // namespace ledger::replay
