#include "replay/kueue/workload_waits.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "replay/fold/replayer.h"
#include "replay/kueue/workload_usage.h"

namespace ledger::replay {

namespace {

// One workload's wait as the pass follows it.
struct Followed {
  std::string uid;
  std::int64_t creationNs = 0;
  std::int64_t requeuedNs = 0;  // the latest Requeued condition's lastTransitionTime
  std::int64_t lostNs = 0;      // the last record at which it lost its reservation
  WorkloadConditions conditions;
  std::string localQueue;    // spec.queueName
  std::string clusterQueue;  // status.admission.clusterQueue
  // pkg/workload QueuedWaitTime, with a lost reservation as a requeue.
  std::int64_t queuedNs() const { return std::max({creationNs, requeuedNs, lostNs}); }
};

std::int64_t requeuedTime(schema::Workload::Reader wl) {
  for (auto c : wl.getConditions()) {
    if (c.getType() == "Requeued") return c.getLastTransitionNs();
  }
  return 0;
}

class WaitPass {
 public:
  WaitPass(std::int64_t fromNs, std::int64_t toNs, WaitGrouping by)
      : fromNs_(fromNs), toNs_(toNs), by_(by) {}

  void record(schema::ProjectedRecord::Reader r) {
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
    workload(std::move(key), r);
  }

  WaitsReport finish() {
    for (const auto& [key, w] : workloads_) {
      if (w.conditions.admitted || w.conditions.finished) continue;
      ++groups_[groupOf(key, w)].stillPending;
    }
    WaitsReport out;
    out.fromNs = fromNs_;
    out.toNs = toNs_;
    out.by = by_;
    for (auto& [key, group] : groups_) {
      group.key = key;
      std::sort(group.waitsNs.begin(), group.waitsNs.end());
      out.groups.push_back(std::move(group));
    }
    return out;
  }

 private:
  static std::string keyOf(schema::ProjectedRecord::Reader r) {
    auto id = r.getIdentity();
    return std::string(id.getNamespace().cStr()) + "/" + id.getName().cStr();
  }

  void workload(std::string key, schema::ProjectedRecord::Reader r) {
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
    if (!fresh && !w.conditions.admitted && now.admitted && t >= fromNs_ && t < toNs_) {
      groups_[groupOf(it->first, w)].waitsNs.push_back(std::max<std::int64_t>(0, t - w.queuedNs()));
    }
    w.conditions = now;
  }

  std::string groupOf(const std::string& key, const Followed& w) const {
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

  std::int64_t fromNs_, toNs_;
  WaitGrouping by_;
  std::unordered_map<std::string, Followed> workloads_;
  std::unordered_map<std::string, std::string> localQueues_;  // ns/name -> ClusterQueue
  std::map<std::string, WaitGroup> groups_;
};

}  // namespace

WaitGrouping parseWaitGrouping(std::string_view text) {
  if (text == "cluster-queue") return WaitGrouping::kClusterQueue;
  if (text == "namespace") return WaitGrouping::kNamespace;
  if (text == "local-queue") return WaitGrouping::kLocalQueue;
  throw std::invalid_argument("waits are grouped by cluster-queue, namespace or local-queue");
}

const char* waitGroupingText(WaitGrouping by) {
  switch (by) {
    case WaitGrouping::kNamespace:
      return "namespace";
    case WaitGrouping::kLocalQueue:
      return "local-queue";
    case WaitGrouping::kClusterQueue:
      break;
  }
  return "cluster-queue";
}

std::optional<std::int64_t> nearestRank(const std::vector<std::int64_t>& sortedNs, int percent) {
  if (sortedNs.empty()) return std::nullopt;
  // rank = ceil(percent * n / 100), at least 1.
  const std::size_t n = sortedNs.size();
  std::size_t rank = (static_cast<std::size_t>(percent) * n + 99) / 100;
  rank = std::clamp<std::size_t>(rank, 1, n);
  return sortedNs[rank - 1];
}

WaitsReport workloadWaits(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                          WaitGrouping by,
                          const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  WaitPass pass(fromNs, toNs, by);
  // The records before toNs: the last at or before toNs - 1.
  const std::uint64_t last = Replayer(ledger).seqAt(toNs - 1);
  std::uint64_t done = 0;
  if (last != 0) {
    Status st =
        ledger.scanProjections(1, last, [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
          if (progress && (++done & 0xFFFF) == 0) progress(done, last);
          pass.record(r);
          return true;
        });
    if (!st.isOk()) throw ReplayError(st);
  }
  if (progress) progress(last, last);
  return pass.finish();
}

}  // namespace ledger::replay
