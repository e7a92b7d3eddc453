#include "replay/history/preemption_check.h"

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "replay/admission/preemption_candidates.h"
#include "replay/admission/quota_view.h"
#include "replay/kueue/workload_usage.h"

namespace ledger::replay::history {

namespace {

namespace adm = admission;

// A workload as the check reads it, from a folded state or a record.
struct Side {
  std::string key, clusterQueue;
  std::int32_t priority = 0;
  std::int64_t creationNs = 0;
  std::map<FlavorResource, Quantity> usage;
};

Side sideOf(std::string key, schema::Projection::Reader p) {
  auto wl = p.getBody().getWorkload();
  Side s;
  s.key = std::move(key);
  s.clusterQueue = wl.getAdmissionClusterQueue().cStr();
  s.priority = wl.getPriority();
  s.creationNs = p.getCreationNs();
  s.usage = admissionUsage(wl, nullptr);
  return s;
}

// spec.preemption of a ClusterQueue at a moment. borrowWithinCohort is not
// in the projection: it is read from the recorded object.
struct QueuePolicy {
  std::string within = "Never", reclaim = "Never", borrow = "Never";
  std::optional<std::int32_t> threshold;  // borrowWithinCohort.maxPriorityThreshold
};

QueuePolicy policyOf(const Ledger& ledger, const ClusterState& state, const std::string& cq) {
  QueuePolicy out;
  const StoredObject* obj = state.find(ObjectKind::kClusterQueue, cq);
  if (obj == nullptr) return out;
  auto spec = obj->projection().getBody().getClusterQueue();
  // Kueue's defaults (apis/kueue ClusterQueuePreemption): Never for both.
  if (spec.getWithinClusterQueue().size() > 0) out.within = spec.getWithinClusterQueue().cStr();
  if (spec.getReclaimWithinCohort().size() > 0) out.reclaim = spec.getReclaimWithinCohort().cStr();
  Record record;
  if (!ledger.read(obj->seq(), &record).isOk()) return out;
  const auto json = nlohmann::json::parse(record.objectJson, nullptr, false);
  const nlohmann::json* bwc = nullptr;
  if (json.is_object() && json.contains("spec") && json["spec"].is_object() &&
      json["spec"].contains("preemption") && json["spec"]["preemption"].is_object() &&
      json["spec"]["preemption"].contains("borrowWithinCohort")) {
    bwc = &json["spec"]["preemption"]["borrowWithinCohort"];
  }
  if (bwc != nullptr && bwc->is_object()) {
    if (bwc->contains("policy") && (*bwc)["policy"].is_string()) {
      out.borrow = (*bwc)["policy"].get<std::string>();
    }
    if (bwc->contains("maxPriorityThreshold") &&
        (*bwc)["maxPriorityThreshold"].is_number_integer()) {
      out.threshold = (*bwc)["maxPriorityThreshold"].get<std::int32_t>();
    }
  }
  return out;
}

std::string conditionText(schema::Workload::Reader wl, const char* type, std::string* reason) {
  for (auto c : wl.getConditions()) {
    if (c.getType() != type) continue;
    if (reason != nullptr) *reason = c.getReason().cStr();
    std::string text = c.getReason().cStr();
    if (c.getMessage().size() > 0) text += ": " + std::string(c.getMessage().cStr());
    return text;
  }
  return {};
}

// The UID in "... a workload (UID: u, JobUID: j) ..." (pkg/scheduler/
// preemption preemptionMessage), "" when absent or UNKNOWN.
std::string preemptorUid(const std::string& message) {
  const std::string tag = "(UID: ";
  const auto at = message.find(tag);
  if (at == std::string::npos) return {};
  const auto begin = at + tag.size();
  const auto end = message.find_first_of(",)", begin);
  if (end == std::string::npos) return {};
  std::string uid = message.substr(begin, end - begin);
  return uid == "UNKNOWN" ? std::string() : uid;
}

std::string priorityText(const std::string& policy, const Side& p, const Side& v) {
  return policy + " (preemptor priority " + std::to_string(p.priority) + ", " + v.key +
         " priority " + std::to_string(v.priority) + ")";
}

struct Verdict {
  std::string policy;
  bool conforms = false;
  std::string explanation;
};

// Would some (flavor, resource) of `frs` be above the ClusterQueue's nominal
// quota (pkg/cache IsWithinNominalInResources, negated)?
bool aboveNominal(const adm::QuotaView& view, const std::string& cq,
                  const std::set<FlavorResource>& frs) {
  for (const auto& fr : frs) {
    if (view.usage(cq, false, fr) > view.nominal(cq, fr)) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// classifyPreemptionVariant for one victim, given that it was preempted.
Verdict judge(const QueuePolicy& qp, const Side& p, const Side& v,
              const std::set<FlavorResource>& frs, const adm::QuotaView& before,
              std::optional<bool> borrowsAfter, const std::string& kueueReason) {
  Verdict out;
  const bool sameQueue = p.clusterQueue == v.clusterQueue;
  out.policy = sameQueue ? "withinClusterQueue" : "reclaimWithinCohort";
  // WorkloadUsesResources: a candidate must hold what the preemptor needs.
  if (frs.empty()) {
    out.explanation = v.key + " held none of the resources " + p.key + " was assigned";
    return out;
  }
  if (sameQueue) {
    out.conforms = policyAllows(qp.within, p.priority, v.priority, p.creationNs, v.creationNs);
    out.explanation = std::string(out.conforms ? "allowed" : "not allowed") + " by " +
                      p.clusterQueue + "'s withinClusterQueue: " + priorityText(qp.within, p, v);
    return out;
  }
  const std::string root = before.rootOf(p.clusterQueue, false);
  if (root.empty() || before.rootOf(v.clusterQueue, false) != root) {
    out.explanation = "ClusterQueue " + v.clusterQueue + " is not in the cohort tree of " +
                      p.clusterQueue + ": Kueue preempts only within its ClusterQueue and cohort";
    return out;
  }
  std::vector<std::string> against;
  // collectCandidatesForHierarchicalReclaim: reclaimWithinCohort Never
  // gives no candidate outside the ClusterQueue, whatever borrowWithinCohort says.
  if (!policyAllows(qp.reclaim, p.priority, v.priority, p.creationNs, v.creationNs)) {
    against.push_back(p.clusterQueue + "'s reclaimWithinCohort is " +
                      priorityText(qp.reclaim, p, v));
  }
  // candidateIsValid: the candidate's ClusterQueue must be above its
  // nominal quota in a resource the preemptor needs.
  if (!aboveNominal(before, v.clusterQueue, frs)) {
    against.push_back("ClusterQueue " + v.clusterQueue +
                      " was within its nominal quota (not borrowing) in what was needed");
  }
  if (kueueReason == "InCohortFairSharing") {
    out.policy = "fairSharing";
    out.conforms = against.empty();
    out.explanation = (out.conforms ? std::string("allowed by fair sharing's candidate rules")
                                    : "not allowed: " + joined(against)) +
                      " (the dominant resource shares are not re-checked)";
    return out;
  }
  if (borrowsAfter.value_or(false)) {
    // ReclaimWhileBorrowing: the preemptor's queue borrows after admission.
    out.policy = "borrowWithinCohort";
    if (qp.borrow != "LowerPriority") {
      against.push_back(p.clusterQueue + " borrowed after the admission and its " +
                        "borrowWithinCohort policy is " + qp.borrow);
    } else if (v.priority >= p.priority) {
      against.push_back("borrowWithinCohort preempts only lower priorities: " +
                        priorityText("LowerPriority", p, v));
    } else if (qp.threshold && v.priority > *qp.threshold) {
      against.push_back(v.key + "'s priority " + std::to_string(v.priority) +
                        " is above borrowWithinCohort's maxPriorityThreshold " +
                        std::to_string(*qp.threshold));
    }
  }
  out.conforms = against.empty();
  out.explanation =
      out.conforms ? "allowed by " + p.clusterQueue + "'s " + out.policy + " (" +
                         (out.policy == "borrowWithinCohort"
                              ? "LowerPriority" + (qp.threshold ? ", maxPriorityThreshold " +
                                                                      std::to_string(*qp.threshold)
                                                                : std::string())
                              : qp.reclaim) +
                         "): " + v.clusterQueue + " was borrowing"
                   : "not allowed: " + joined(against);
  return out;
}

}  // namespace

bool policyAllows(const std::string& policy, std::int32_t preemptorPriority,
                  std::int32_t victimPriority, std::int64_t preemptorQueuedNs,
                  std::int64_t victimQueuedNs) {
  const bool lower = preemptorPriority > victimPriority;
  if (policy == "LowerPriority") return lower;
  if (policy == "LowerOrNewerEqualPriority") {
    return lower || (preemptorPriority == victimPriority && preemptorQueuedNs < victimQueuedNs);
  }
  return policy == "Any";
}

namespace {

// The preemptor's reservation: the first record after the eviction at which
// it (when known) or, else, a workload of the victim's ClusterQueue or
// cohort tree that was not reserving before reserves quota. Bounded: a
// preemptor Kueue admits takes its quota within moments.
constexpr std::uint64_t kScanAfterEviction = 100000;

struct Found {
  std::string key;
  std::uint64_t seq = 0;  // its reservation (0: not found)
  std::optional<Side> side;
};

Found findReservation(const Ledger& ledger, std::uint64_t seq, std::uint64_t lastSeq,
                      const std::string& victimKey, const std::string& knownKey,
                      const std::set<std::string>& reservingBefore,
                      const std::function<bool(const std::string& cq)>& inTree) {
  Found out;
  out.key = knownKey;
  const std::uint64_t end = std::min(lastSeq, seq + kScanAfterEviction);
  if (end <= seq) return out;
  Status st =
      ledger.scanProjections(seq + 1, end, [&](std::uint64_t s, schema::ProjectedRecord::Reader r) {
        if (r.getType() == schema::EventType::DELETED || !r.getObject().getBody().isWorkload())
          return true;
        const std::string key = ClusterState::key(r.getIdentity().getNamespace().cStr(),
                                                  r.getIdentity().getName().cStr());
        auto wl = r.getObject().getBody().getWorkload();
        if (!conditionsOf(wl).quotaReserved) return true;
        if (knownKey.empty()) {
          if (key == victimKey || reservingBefore.count(key) ||
              !inTree(wl.getAdmissionClusterQueue().cStr())) {
            return true;
          }
        } else if (key != knownKey) {
          return true;
        }
        out.key = key;
        out.seq = s;
        out.side = sideOf(key, r.getObject());
        return false;
      });
  if (!st.isOk()) throw ReplayError(st);
  return out;
}

}  // namespace

EvictionExplained explainEviction(const Ledger& ledger, const std::string& ns,
                                  const std::string& name, std::uint64_t seq, std::uint64_t lastSeq,
                                  const FoldOptions& fold) {
  EvictionExplained out;
  out.seq = seq;
  std::string evictedReason, preemptedReason, message;
  Status st = ledger.readProjection(seq, [&](schema::ProjectedRecord::Reader r) {
    out.atNs = r.getTimeNs();
    if (!r.getObject().getBody().isWorkload()) return;
    auto wl = r.getObject().getBody().getWorkload();
    out.reason = conditionText(wl, "Evicted", &evictedReason);
    message = out.reason + " " + conditionText(wl, "Preempted", &preemptedReason);
  });
  if (!st.isOk()) throw ReplayError(st);
  out.preemption = evictedReason == "Preempted";
  if (!out.preemption) {
    out.explanation = "not a preemption: evicted for " +
                      (evictedReason.empty() ? std::string("an unrecorded reason") : evictedReason);
    return out;
  }
  const Replayer replayer(ledger);
  const ClusterState before = replayer.foldTo(seq - 1, fold);
  const std::string victimKey = ClusterState::key(ns, name);
  const StoredObject* victimObj = before.find(ObjectKind::kWorkload, victimKey);
  if (victimObj == nullptr) {
    out.explanation = "the workload was not live before its eviction record";
    return out;
  }
  const Side victim = sideOf(victimKey, victimObj->projection());
  const auto reserved = adm::reservedWorkloads(before, "");
  const QuotaTree tree(before, adm::usageByClusterQueue(reserved));
  const adm::QuotaView view(tree);
  std::set<std::string> reservingBefore;
  for (const auto& w : reserved) reservingBefore.insert(w.key);
  const std::string root = view.rootOf(victim.clusterQueue, false);
  auto inTree = [&](const std::string& cq) {
    return cq == victim.clusterQueue || (!root.empty() && view.rootOf(cq, false) == root);
  };

  std::string knownKey;
  if (const std::string uid = preemptorUid(message); !uid.empty()) {
    for (const auto& [key, obj] : before.objects(ObjectKind::kWorkload)) {
      if (obj->uid() == uid) knownKey = key;
    }
  }
  Found found = findReservation(ledger, seq, lastSeq, victimKey, knownKey, reservingBefore, inTree);
  if (found.key.empty()) {
    out.explanation =
        "no preemptor found: Kueue's message names no workload live then, and no "
        "workload of its ClusterQueue or cohort reserved quota after it";
    return out;
  }
  out.preemptor = found.key;
  out.preemptorFrom = knownKey.empty() ? "admittedNext" : "uid";
  // The preemptor as it was before the eviction (priority, creation), its
  // ClusterQueue and flavors from its reservation.
  Side preemptor;
  if (const StoredObject* p = before.find(ObjectKind::kWorkload, found.key)) {
    preemptor = sideOf(found.key, p->projection());
  }
  preemptor.key = found.key;
  if (found.side) {
    if (!before.find(ObjectKind::kWorkload, found.key)) preemptor = *found.side;
    preemptor.clusterQueue = found.side->clusterQueue;
    preemptor.usage = found.side->usage;
  }
  if (preemptor.clusterQueue.empty()) {
    out.explanation = "the preemptor " + found.key + " never reserved quota in what was read";
    return out;
  }
  std::set<FlavorResource> needed;
  for (const auto& [fr, q] : victim.usage) {
    if (!q.isZero() && (preemptor.usage.empty() || preemptor.usage.count(fr))) needed.insert(fr);
  }
  std::optional<bool> borrowsAfter;
  if (found.seq != 0) {
    const ClusterState after = replayer.foldTo(found.seq, fold);
    const auto afterReserved = adm::reservedWorkloads(after, "");
    const QuotaTree afterTree(after, adm::usageByClusterQueue(afterReserved));
    borrowsAfter = aboveNominal(adm::QuotaView(afterTree), preemptor.clusterQueue, needed);
  }
  const Verdict v = judge(policyOf(ledger, before, preemptor.clusterQueue), preemptor, victim,
                          needed, view, borrowsAfter, preemptedReason);
  out.policy = v.policy;
  out.conforms = v.conforms;
  out.explanation = v.explanation;
  return out;
}

}  // namespace ledger::replay::history
