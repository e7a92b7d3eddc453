#include "replay/kueue/workload_history.h"

#include <map>
#include <set>

#include "replay/kueue/workload_usage.h"

namespace ledger::replay {

namespace {

struct Snapshot {
  bool exists = false;
  WorkloadConditions conditions;
  std::string clusterQueue;
  ResourceList recorded;
  ResourceList usage;
  std::map<std::string, std::int32_t> reclaimable;  // status.reclaimablePods
};

// What the workload holds in its ClusterQueue (admissionUsage: resourceUsage
// scaled down by status.reclaimablePods), summed over flavors.
ResourceList heldUsage(schema::Workload::Reader wl) {
  ResourceList out;
  for (const auto& [fr, q] : admissionUsage(wl, nullptr)) out[fr.second] += q;
  return out;
}

std::string reclaimableDetail(const std::map<std::string, std::int32_t>& reclaimable) {
  std::string d;
  for (const auto& [name, count] : reclaimable)
    d += (d.empty() ? "" : ", ") + name + ": " + std::to_string(count) + " reclaimable";
  return d.empty() ? "none reclaimable" : d;
}

std::string conditionDetail(schema::Workload::Reader wl, const char* type) {
  for (auto c : wl.getConditions()) {
    if (c.getType() == type) {
      std::string d = c.getReason().cStr();
      if (c.getMessage().size() > 0)
        d += (d.empty() ? "" : ": ") + std::string(c.getMessage().cStr());
      return d;
    }
  }
  return {};
}

class Tracker {
 public:
  Tracker(WorkloadHistory& out, std::optional<std::int64_t> from, std::optional<std::int64_t> to)
      : out_(out), from_(from), to_(to) {}

  void workload(std::uint64_t seq, std::int64_t t, bool deleted, schema::Projection::Reader p,
                const std::string& uid) {
    out_.found = true;
    Snapshot now;
    if (!deleted) {
      auto wl = p.getBody().getWorkload();
      now.exists = true;
      now.conditions = conditionsOf(wl);
      now.clusterQueue = wl.getAdmissionClusterQueue().cStr();
      now.recorded = recordedUsage(wl, nullptr);
      now.usage = heldUsage(wl);
      for (auto rp : wl.getReclaimablePods()) now.reclaimable[rp.getName().cStr()] = rp.getCount();
      owners_.clear();
      owners_.insert(uid);
      for (auto o : p.getOwnerReferences()) owners_.insert(o.getUid().cStr());
      diff(seq, t, now, &wl);
    } else {
      diff(seq, t, now, nullptr);
    }
    last_ = now;
  }

  void pod(bool deleted, schema::Projection::Reader p, const std::string& uid) {
    bool ours = false;
    for (auto o : p.getOwnerReferences()) ours |= owners_.count(o.getUid().cStr()) != 0;
    if (ours && !deleted) {
      pods_.insert(uid);
    } else {
      pods_.erase(uid);
    }
  }

  void claim(std::uint64_t seq, std::int64_t t, bool deleted, schema::Projection::Reader p,
             const std::string& claimName) {
    bool ours = false;
    for (auto o : p.getOwnerReferences())
      ours |= pods_.count(o.getUid().cStr()) != 0 || owners_.count(o.getUid().cStr()) != 0;
    auto c = p.getBody().getResourceClaim();
    for (auto r : c.getReservedFor()) ours |= pods_.count(r.getUid().cStr()) != 0;
    std::set<std::string> devices;
    if (!deleted && c.getAllocated()) {
      for (auto r : c.getResults()) {
        devices.insert(std::string(r.getDriver().cStr()) + "/" + r.getPool().cStr() + "/" +
                       r.getDevice().cStr());
      }
    }
    auto& held = held_[claimName];
    if (!ours && held.empty()) return;
    for (const auto& d : devices) {
      if (!held.count(d)) emit(seq, t, "DeviceAllocated", d + " (claim " + claimName + ")");
    }
    for (const auto& d : held) {
      if (!devices.count(d)) emit(seq, t, "DeviceReleased", d + " (claim " + claimName + ")");
    }
    held = ours || deleted ? devices : std::set<std::string>{};
  }

 private:
  void emit(std::uint64_t seq, std::int64_t t, const std::string& event,
            const std::string& detail) {
    if ((from_ && t < *from_) || (to_ && t > *to_)) return;
    HistoryEntry e;
    e.seq = seq;
    e.timeNs = t;
    e.event = event;
    e.state = last_.exists ? last_.conditions.state() : "Deleted";
    e.clusterQueue = last_.clusterQueue;
    e.recorded = last_.recorded;
    e.usage = last_.usage;
    e.detail = detail;
    out_.entries.push_back(std::move(e));
  }

  void diff(std::uint64_t seq, std::int64_t t, const Snapshot& now, schema::Workload::Reader* wl) {
    const Snapshot before = last_;
    last_ = now;
    if (!now.exists) {
      if (before.exists) emit(seq, t, "Deleted", "");
      return;
    }
    if (!before.exists) emit(seq, t, "Created", "");
    const auto& a = before.conditions;
    const auto& b = now.conditions;
    if (!a.quotaReserved && b.quotaReserved)
      emit(seq, t, "QuotaReserved", conditionDetail(*wl, "QuotaReserved"));
    if (!a.admitted && b.admitted) emit(seq, t, "Admitted", conditionDetail(*wl, "Admitted"));
    if (!a.evicted && b.evicted) emit(seq, t, "Evicted", conditionDetail(*wl, "Evicted"));
    if (a.quotaReserved && !b.quotaReserved && !b.evicted) {
      emit(seq, t, "Requeued", conditionDetail(*wl, "QuotaReserved"));
    }
    if (!a.finished && b.finished) emit(seq, t, "Finished", conditionDetail(*wl, "Finished"));
    if (before.exists && a.quotaReserved == b.quotaReserved && before.recorded != now.recorded) {
      emit(seq, t, "ChargeChanged", "");
    }
    // Kueue gives back the quota of reclaimable pods (podSetsCountsAfterReclaim)
    // without touching resourceUsage: the held usage changes, `recorded` not.
    if (before.exists && before.reclaimable != now.reclaimable) {
      emit(seq, t, "ReclaimablePodsChanged", reclaimableDetail(now.reclaimable));
    }
    if (before.exists && !before.clusterQueue.empty() && !now.clusterQueue.empty() &&
        before.clusterQueue != now.clusterQueue) {
      emit(seq, t, "ClusterQueueChanged", before.clusterQueue + " -> " + now.clusterQueue);
    }
  }

  WorkloadHistory& out_;
  std::optional<std::int64_t> from_, to_;
  Snapshot last_;
  std::set<std::string> owners_;
  std::set<std::string> pods_;
  std::map<std::string, std::set<std::string>> held_;
};

}  // namespace

WorkloadHistory workloadHistory(const Ledger& ledger, const std::string& ns,
                                const std::string& name, std::optional<std::int64_t> fromNs,
                                std::optional<std::int64_t> toNs,
                                const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  WorkloadHistory out;
  out.ns = ns;
  out.name = name;
  Tracker tracker(out, fromNs, toNs);
  Replayer replayer(ledger);
  const std::uint64_t last = toNs ? replayer.seqAt(*toNs) : ledger.lastSeq();
  std::uint64_t done = 0;
  // One thread: reading the records is nearly all of it, and reading on a
  // second core as a long replay does gained no time for more CPU.
  Status st =
      ledger.scanProjections(1, last, [&](std::uint64_t seq, schema::ProjectedRecord::Reader r) {
        if (progress && (++done & 0xFFFF) == 0) progress(done, last);
        auto id = r.getIdentity();
        if (id.getNamespace() != ns) return true;
        auto p = r.getObject();
        const bool deleted = r.getType() == schema::EventType::DELETED;
        const auto body = p.getBody();
        if (body.isWorkload() && id.getName() == name) {
          tracker.workload(seq, r.getTimeNs(), deleted, p, id.getUid().cStr());
        } else if (body.isPod()) {
          tracker.pod(deleted, p, id.getUid().cStr());
        } else if (body.isResourceClaim()) {
          tracker.claim(seq, r.getTimeNs(), deleted, p, ns + "/" + id.getName().cStr());
        }
        return true;
      });
  if (!st.isOk()) throw ReplayError(st);
  if (progress) progress(last, last);
  return out;
}

}  // namespace ledger::replay
