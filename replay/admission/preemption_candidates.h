// Who holds the quota a workload would need, and whether Kueue's preemption
// policies would let it take that quota back. Preemption is not simulated in
// full; this mirrors the candidate search of pkg/scheduler/preemption
// (Preemptor.findCandidates, preemptioncommon.SatisfiesPreemptionPolicy,
// cqIsBorrowing) and answers the flavor assigner's oracle with it:
//   - withinClusterQueue (default Never): workloads of the same ClusterQueue,
//     LowerPriority / LowerOrNewerEqualPriority / Any;
//   - reclaimWithinCohort (default Never): workloads of other ClusterQueues in
//     the same cohort tree that are borrowing the (flavor, resource);
// and a candidate must hold the (flavor, resource). The oracle says
// kNoCandidates when there is none or when removing them all would still not
// make room (classicalPreemptions finds no target set), kPreempt when one is
// in the same ClusterQueue, else kReclaim. Not mirrored: hierarchical
// advantage, borrowWithinCohort and its priority threshold, fair sharing,
// priority boosts, and the minimal target set (all candidates are removed).
//
// "Holders" for the report are wider: lower-priority workloads in the same
// ClusterQueue, or in a borrowing ClusterQueue of the cohort tree, each
// flagged with whether the policy allows preempting it.
//
// Ownership: borrows the state and workload list. Thread-compatible; never throws.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "replay/admission/flavor_assigner.h"

namespace ledger::replay::admission {

// A workload holding quota as the scheduler's cache counts it
// (HasActiveQuotaReservation: QuotaReserved=True, not Finished, spec.active
// not false): podSetAssignments' resourceUsage per flavor (replay/kueue/workload_usage.h).
struct ReservedWorkload {
  std::string key;  // namespace/name
  std::string clusterQueue;
  std::int32_t priority = 0;
  std::int64_t creationNs = 0;
  std::map<FlavorResource, Quantity> usage;
};

// Every reserving workload of the state except `excludeKey`, sorted by key.
std::vector<ReservedWorkload> reservedWorkloads(const ClusterState& state,
                                                const std::string& excludeKey);
QuotaTree::Usage usageByClusterQueue(const std::vector<ReservedWorkload>& workloads);

struct Preemptor {
  std::string clusterQueue;
  std::int32_t priority = 0;
  std::int64_t creationNs = 0;
};

struct Holder {
  const ReservedWorkload* workload = nullptr;
  bool sameClusterQueue = false;
  bool allowedByPolicy = false;
  std::string policy;  // e.g. "withinClusterQueue: Never"
};

class CandidateFinder {
 public:
  CandidateFinder(const ClusterState& state, const QuotaView& quota,
                  const std::vector<ReservedWorkload>& workloads, Preemptor preemptor);

  // Preemptor.findCandidates for one (flavor, resource).
  std::vector<const ReservedWorkload*> candidates(const FlavorResource& fr) const;
  // The oracle answer for `quantity` of fr (see the file comment).
  PreemptionSimulation simulate(const FlavorResource& fr, Int128 quantity) const;
  // Lower-priority holders of any of `frs` (plus policy candidates), by key.
  std::vector<Holder> holders(const std::vector<FlavorResource>& frs) const;

 private:
  bool satisfies(const ReservedWorkload& w, const std::string& policy) const;
  bool borrowing(const std::string& clusterQueue, const FlavorResource& fr) const;
  bool inSameTree(const std::string& clusterQueue) const;

  const ClusterState& state_;
  const QuotaView& quota_;
  const std::vector<ReservedWorkload>& workloads_;
  Preemptor preemptor_;
  std::string withinClusterQueue_;   // "" = Never
  std::string reclaimWithinCohort_;  // "" = Never
  std::string root_;                 // root cohort of the preemptor's queue
};

}  // namespace ledger::replay::admission
