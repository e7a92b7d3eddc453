#include "replay/admission/preemption_candidates.h"

#include "replay/kueue/workload_usage.h"

namespace ledger::replay::admission {

namespace {

bool policySet(const std::string& policy) { return !policy.empty() && policy != "Never"; }

bool uses(const ReservedWorkload& w, const FlavorResource& fr) {
  auto it = w.usage.find(fr);
  return it != w.usage.end() && !it->second.isZero();
}

}  // namespace

std::vector<ReservedWorkload> reservedWorkloads(const ClusterState& state,
                                                const std::string& excludeKey) {
  std::vector<ReservedWorkload> out;
  for (const auto& [key, obj] : state.objects(ObjectKind::kWorkload)) {
    if (key == excludeKey) continue;
    auto wl = obj->projection().getBody().getWorkload();
    // cache.go: HasActiveQuotaReservation (QuotaReserved, not Finished, spec.active)
    // and an admission naming the queue.
    if (!conditionsOf(wl).reserving() || !wl.getActive() || !wl.getHasAdmission() ||
        wl.getAdmissionClusterQueue().size() == 0) {
      continue;
    }
    ReservedWorkload w;
    w.key = key;
    w.clusterQueue = wl.getAdmissionClusterQueue().cStr();
    w.priority = wl.getPriority();
    w.creationNs = obj->projection().getCreationNs();
    w.usage = admissionUsage(wl, nullptr);
    out.push_back(std::move(w));
  }
  return out;
}

QuotaTree::Usage usageByClusterQueue(const std::vector<ReservedWorkload>& workloads) {
  QuotaTree::Usage usage;
  for (const auto& w : workloads) {
    for (const auto& [fr, q] : w.usage) usage[w.clusterQueue][fr] += q;
  }
  return usage;
}

CandidateFinder::CandidateFinder(const ClusterState& state, const QuotaView& quota,
                                 const std::vector<ReservedWorkload>& workloads,
                                 Preemptor preemptor)
    : state_(state), quota_(quota), workloads_(workloads), preemptor_(std::move(preemptor)) {
  if (const StoredObject* cq = state.find(ObjectKind::kClusterQueue, preemptor_.clusterQueue)) {
    auto spec = cq->projection().getBody().getClusterQueue();
    withinClusterQueue_ = spec.getWithinClusterQueue().cStr();
    reclaimWithinCohort_ = spec.getReclaimWithinCohort().cStr();
  }
  root_ = quota_.rootOf(preemptor_.clusterQueue, false);
}

// preemptioncommon.SatisfiesPreemptionPolicy (queue order = creation time).
bool CandidateFinder::satisfies(const ReservedWorkload& w, const std::string& policy) const {
  const bool lower = preemptor_.priority > w.priority;
  if (policy == "LowerPriority") return lower;
  if (policy == "LowerOrNewerEqualPriority") {
    return lower || (preemptor_.priority == w.priority && preemptor_.creationNs < w.creationNs);
  }
  return policy == "Any";
}

// cqIsBorrowing for one (flavor, resource): in a cohort and above nominal.
bool CandidateFinder::borrowing(const std::string& clusterQueue, const FlavorResource& fr) const {
  return !quota_.parentOf(clusterQueue, false).empty() && quota_.borrowingWith(clusterQueue, fr, 0);
}

bool CandidateFinder::inSameTree(const std::string& clusterQueue) const {
  return !root_.empty() && quota_.rootOf(clusterQueue, false) == root_;
}

std::vector<const ReservedWorkload*> CandidateFinder::candidates(const FlavorResource& fr) const {
  std::vector<const ReservedWorkload*> out;
  for (const auto& w : workloads_) {
    if (!uses(w, fr)) continue;
    if (w.clusterQueue == preemptor_.clusterQueue) {
      if (policySet(withinClusterQueue_) && satisfies(w, withinClusterQueue_)) out.push_back(&w);
    } else if (policySet(reclaimWithinCohort_) && inSameTree(w.clusterQueue) &&
               borrowing(w.clusterQueue, fr) && satisfies(w, reclaimWithinCohort_)) {
      out.push_back(&w);
    }
  }
  return out;
}

PreemptionSimulation CandidateFinder::simulate(const FlavorResource& fr, Int128 quantity) const {
  const auto none = [&] {
    return PreemptionSimulation{
        PreemptionMode::kNoCandidates,
        quota_.heightOfLowestSubtreeThatFits(preemptor_.clusterQueue, fr, quantity).height};
  };
  const auto found = candidates(fr);
  if (found.empty()) return none();
  // SimulateWorkloadUsageRemoval of every candidate.
  std::vector<ReservedWorkload> rest;
  bool sameQueue = false;
  for (const auto& w : workloads_) {
    bool removed = false;
    for (const auto* c : found) removed = removed || c == &w;
    if (!removed) rest.push_back(w);
    if (removed && w.clusterQueue == preemptor_.clusterQueue) sameQueue = true;
  }
  const QuotaTree tree(state_, usageByClusterQueue(rest));
  const QuotaView after(tree);
  if (quantity > after.available(preemptor_.clusterQueue, fr)) return none();
  return PreemptionSimulation{
      sameQueue ? PreemptionMode::kPreempt : PreemptionMode::kReclaim,
      after.heightOfLowestSubtreeThatFits(preemptor_.clusterQueue, fr, quantity).height};
}

std::vector<Holder> CandidateFinder::holders(const std::vector<FlavorResource>& frs) const {
  std::vector<Holder> out;
  for (const auto& w : workloads_) {
    bool holds = false, allowed = false, borrows = false;
    const bool same = w.clusterQueue == preemptor_.clusterQueue;
    for (const auto& fr : frs) {
      if (!uses(w, fr)) continue;
      holds = true;
      const bool b = !same && inSameTree(w.clusterQueue) && borrowing(w.clusterQueue, fr);
      borrows = borrows || b;
      if (same) {
        allowed = allowed || (policySet(withinClusterQueue_) && satisfies(w, withinClusterQueue_));
      } else if (b) {
        allowed =
            allowed || (policySet(reclaimWithinCohort_) && satisfies(w, reclaimWithinCohort_));
      }
    }
    const bool lower = w.priority < preemptor_.priority;
    if (!holds || !(allowed || (lower && (same || borrows)))) continue;
    Holder h;
    h.workload = &w;
    h.sameClusterQueue = same;
    h.allowedByPolicy = allowed;
    h.policy = same ? "withinClusterQueue: " +
                          (policySet(withinClusterQueue_) ? withinClusterQueue_ : "Never")
                    : "reclaimWithinCohort: " +
                          (policySet(reclaimWithinCohort_) ? reclaimWithinCohort_ : "Never");
    out.push_back(h);
  }
  return out;
}

}  // namespace ledger::replay::admission
