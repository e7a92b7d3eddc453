#include "replay/kueue/workload_history.h"

#include <capnp/serialize.h>

#include <algorithm>
#include <map>
#include <set>

#include "ledger/format.h"
#include "ledger/object_index.h"
#include "replay/fold/observations.h"
#include "replay/kueue/workload_usage.h"
#include "schema/k8s/rfc3339.h"

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

constexpr std::int64_t kSecondNs = 1'000'000'000;

std::int64_t conditionTime(schema::Workload::Reader wl, const char* type) {
  for (auto c : wl.getConditions()) {
    if (c.getType() == type) return c.getLastTransitionNs();
  }
  return 0;
}

// The gap of `bracket` that concerns `resource` ("/workloads", ...), if any.
const ObservationGap* gapFor(const SnapshotBracket& bracket, std::string_view resource) {
  for (const auto& g : bracket.gaps) {
    for (const auto& r : g.resources) {
      if (r.size() >= resource.size() &&
          r.compare(r.size() - resource.size(), resource.size(), resource) == 0) {
        return &g;
      }
    }
  }
  return nullptr;
}

// A change first seen at a relist after a gap happened at some moment of
// the gap, not when it was recorded: the entry says so.
void markRelisted(const Ledger& ledger, WorkloadHistory& history) {
  const auto brackets = readSnapshots(ledger);
  for (auto& e : history.entries) {
    for (const auto& b : brackets) {
      if (b.gaps.empty() || e.seq < b.firstSeq || (b.lastSeq != 0 && e.seq > b.lastSeq)) continue;
      const bool device = e.event == "DeviceAllocated" || e.event == "DeviceReleased";
      const ObservationGap* g = gapFor(b, device ? "/resourceclaims" : "/workloads");
      if (g == nullptr) continue;
      e.detail += std::string(e.detail.empty() ? "" : "; ") + "happened between " +
                  formatRfc3339(g->fromNs) + " and " + formatRfc3339(g->toNs) +
                  " (first seen at a relist after a gap)";
    }
  }
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
    if (!a.quotaReserved && b.quotaReserved) {
      // First seen already reserved (a sidecar installed on a running
      // cluster, a relist): the condition says since when.
      const std::int64_t since = conditionTime(*wl, "QuotaReserved");
      if (!before.exists && since != 0 && since < t - kSecondNs) {
        emit(seq, t, "QuotaReserved",
             "already reserved since " + formatRfc3339(since) + " (before the ledger)");
      } else {
        emit(seq, t, "QuotaReserved", conditionDetail(*wl, "QuotaReserved"));
      }
    }
    if (!a.admitted && b.admitted) emit(seq, t, "Admitted", conditionDetail(*wl, "Admitted"));
    if (!a.evicted && b.evicted) emit(seq, t, "Evicted", conditionDetail(*wl, "Evicted"));
    // Losing the reservation, after an eviction or not, puts the workload
    // back in its queue: the interval that follows is pending.
    if (a.quotaReserved && !b.quotaReserved && !b.finished) {
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

// One record of the namespace, as the scan and the indexed read feed it.
void feed(Tracker& tracker, const std::string& ns, const std::string& name, std::uint64_t seq,
          schema::ProjectedRecord::Reader r) {
  auto id = r.getIdentity();
  if (id.getNamespace() != ns) return;
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
}

// The group of Workload objects (ingest/projector.cpp projects a Workload
// body from this group only).
constexpr std::string_view kWorkloadGroup = "kueue.x-k8s.io";

class IndexReader {
 public:
  IndexReader(const Ledger& ledger, std::string ns, std::uint64_t last)
      : ledger_(ledger), ns_(std::move(ns)), last_(last) {}

  // Adds the records of `objectKey` at or before the last seq; false if
  // the object was already added.
  bool addObject(const std::string& objectKey) {
    if (!objects_.insert(objectKey).second) return false;
    const std::string prefix = format::objectRecordsPrefix(objectKey);
    std::vector<std::uint64_t> seqs;
    check(ledger_.scanObjectIndex(prefix, [&](std::string_view key, std::string_view value) {
      std::string_view entryObject;
      std::uint64_t first = 0;
      // Object keys hold no NUL: an entry of another shape is not this
      // object's.
      if (!parseRecordEntryKey(key, &entryObject, &first) || entryObject != objectKey) return;
      if (!decodeRecordEntry(first, value, seqs)) {
        throw ReplayError(Status::corruption("object index entry for " + objectKey +
                                             " does not decode (`ledger-replay verify`)"));
      }
    }));
    auto& kept = objectSeqs_[objectKey];
    for (const std::uint64_t seq : seqs) {
      if (seq <= last_) kept.push_back(seq);
    }
    return true;
  }

  // The objects that ever referred to one of `uids`.
  std::set<std::string> referrers(const std::set<std::string>& uids) const {
    std::set<std::string> out;
    for (const auto& uid : uids) {
      const std::string prefix = format::referrersPrefix(ns_, uid);
      check(ledger_.scanObjectIndex(prefix, [&](std::string_view key, std::string_view) {
        out.emplace(key.substr(prefix.size()));
      }));
    }
    return out;
  }

  // Every uid the records of the objects in `keys` carry.
  std::set<std::string> uidsOf(const std::set<std::string>& keys) const {
    std::vector<std::uint64_t> seqs;
    for (const auto& k : keys) {
      auto it = objectSeqs_.find(k);
      if (it != objectSeqs_.end()) seqs.insert(seqs.end(), it->second.begin(), it->second.end());
    }
    std::sort(seqs.begin(), seqs.end());
    std::set<std::string> out;
    read(seqs, [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
      out.emplace(r.getIdentity().getUid().cStr());
    });
    return out;
  }

  std::vector<std::uint64_t> allSeqs() const {
    std::vector<std::uint64_t> seqs;
    for (const auto& [k, v] : objectSeqs_) seqs.insert(seqs.end(), v.begin(), v.end());
    std::sort(seqs.begin(), seqs.end());
    seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
    return seqs;
  }

  void read(const std::vector<std::uint64_t>& seqs,
            const std::function<void(std::uint64_t, schema::ProjectedRecord::Reader)>& fn) const {
    check(ledger_.readProjectionsWords(
        seqs, [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> words) {
          capnp::FlatArrayMessageReader reader(words);
          fn(seq, reader.getRoot<schema::ProjectedRecord>());
        }));
  }

 private:
  static void check(const Status& st) {
    if (!st.isOk()) throw ReplayError(st);
  }

  const Ledger& ledger_;
  std::string ns_;
  std::uint64_t last_;
  std::set<std::string> objects_;
  std::map<std::string, std::vector<std::uint64_t>> objectSeqs_;
};

}  // namespace

WorkloadHistory workloadHistoryScan(
    const Ledger& ledger, const std::string& ns, const std::string& name,
    std::optional<std::int64_t> fromNs, std::optional<std::int64_t> toNs,
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
        feed(tracker, ns, name, seq, r);
        return true;
      });
  if (!st.isOk()) throw ReplayError(st);
  if (progress) progress(last, last);
  markRelisted(ledger, out);
  return out;
}

WorkloadHistory workloadHistory(const Ledger& ledger, const std::string& ns,
                                const std::string& name, std::optional<std::int64_t> fromNs,
                                std::optional<std::int64_t> toNs,
                                const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  // A history folds the workload's records from its first: on a cut ledger
  // those before the cut are in the archive, and a history of the rest
  // would start mid-way as if it were whole.
  if (ledger.archiveCut()) {
    throw ReplayError(
        ledger.refusedBeforeCut("a workload's history (it starts at its first record)"));
  }
  bool complete = false;
  if (Status st = ledger.objectIndexComplete(&complete); !st.isOk()) throw ReplayError(st);
  if (!complete) return workloadHistoryScan(ledger, ns, name, fromNs, toNs, progress);
  WorkloadHistory out;
  out.ns = ns;
  out.name = name;
  out.indexed = true;
  Tracker tracker(out, fromNs, toNs);
  Replayer replayer(ledger);
  const std::uint64_t last = toNs ? replayer.seqAt(*toNs) : ledger.lastSeq();
  IndexReader index(ledger, ns, last);
  // The workload, then the objects referring to any uid it or its owners
  // had (its pods; claims it owns), then those referring to theirs (claims
  // of its pods): a superset of what the scan's tracker follows, and every
  // record of each, so the tracker sees each change it would in the scan.
  const std::string workloadKey = std::string(kWorkloadGroup) + "/Workload/" + ns + "/" + name;
  index.addObject(workloadKey);
  std::set<std::string> uids;
  index.read(index.allSeqs(), [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
    uids.emplace(r.getIdentity().getUid().cStr());
    for (auto o : r.getObject().getOwnerReferences()) uids.emplace(o.getUid().cStr());
  });
  uids.erase("");
  std::set<std::string> owned;
  for (const auto& k : index.referrers(uids)) {
    if (index.addObject(k)) owned.insert(k);
  }
  std::set<std::string> ownedUids = index.uidsOf(owned);
  ownedUids.erase("");
  for (const auto& k : index.referrers(ownedUids)) index.addObject(k);
  const auto seqs = index.allSeqs();
  std::uint64_t done = 0;
  index.read(seqs, [&](std::uint64_t seq, schema::ProjectedRecord::Reader r) {
    if (progress && (++done & 0xFFFF) == 0) progress(done, seqs.size());
    feed(tracker, ns, name, seq, r);
  });
  if (progress) progress(seqs.size(), seqs.size());
  markRelisted(ledger, out);
  return out;
}

}  // namespace ledger::replay
