// Kueue's flavor assigner on the ledger's state
// (pkg/scheduler/flavorassigner/flavorassigner.go, FlavorAssigner.assignFlavors):
// per pod set, per resource (in Kueue's hash order), the resource group that
// covers it is searched flavor by flavor in ClusterQueue order; a flavor must
// be eligible (flavor_eligibility.h), then every resource of the group must
// fit its quota (fitsResourceQuota: within nominal quota, by borrowing from the
// cohort, by preemption, or not at all), and flavorFungibility decides whether
// to stop there or try the next flavor (shouldTryNextFlavor / isPreferred).
// Usage accumulates over pod sets; the first pod set that gets no flavor ends
// the assignment, as upstream.
//
// Not mirrored (the ledger does not record them, or they need a live
// scheduler): the per-workload bookmark of the last tried flavor (the search
// always starts at the first flavor), pod set groups (TAS), topology-aware
// scheduling, partial admission, reclaimable pods, workload slices,
// nomination mappings, QuotaCheckStrategy=IgnoreUndeclared, the fungibility
// `preference` field (BorrowingOverPreemption, the default, is used) and
// preemption.borrowWithinCohort / fair sharing (canPreemptWhileBorrowing is an
// input, false unless the caller knows better).
//
// Ownership: borrows everything in AssignerContext and the pod specs in the
// requests; the result owns its data. Thread-compatible. Never throws
// (a ClusterQueue missing from the state gives an empty assignment).
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "replay/admission/quota_view.h"
#include "replay/fold/cluster_state.h"

namespace ledger::replay::admission {

// upstream preemptionMode, worst to best.
enum class PreemptionMode { kNoFit, kNoCandidates, kPreempt, kReclaim, kFit };
// upstream FlavorAssignmentMode, worst to best.
enum class AssignmentMode { kNoFit, kPreempt, kFit };

const char* modeName(AssignmentMode mode);  // "NoFit", "Preempt", "Fit"
AssignmentMode assignmentMode(PreemptionMode mode);

struct GranularMode {
  PreemptionMode preemption = PreemptionMode::kNoFit;
  int borrowingLevel = INT_MAX;
};

struct FlavorFungibility {
  bool borrowTryNext = false;  // whenCanBorrow: TryNextFlavor (default MayStopSearch)
  bool preemptTryNext = true;  // whenCanPreempt: TryNextFlavor (default)
};
FlavorFungibility fungibilityOf(schema::ClusterQueue::Reader clusterQueue);

// isPreferred with the BorrowingOverPreemption preference.
bool isPreferred(const GranularMode& a, const GranularMode& b);
bool shouldTryNextFlavor(const GranularMode& mode, const FlavorFungibility& fungibility);

// What preemption could do for (flavor, resource) and `quantity` (upstream
// preemptionOracle.SimulatePreemption): kNoCandidates, kPreempt or kReclaim,
// and the borrowing height after the preemptions.
struct PreemptionSimulation {
  PreemptionMode mode = PreemptionMode::kNoCandidates;
  int borrowAfter = 0;
};
using PreemptionOracle =
    std::function<PreemptionSimulation(const FlavorResource& fr, Int128 quantity)>;

struct PodSetRequest {
  std::string name;
  std::int32_t count = 1;
  std::map<std::string, Int128> requests;  // pod set totals, Kueue units ("pods" added here)
  schema::PodSpec::Reader podSpec;         // for taints and node affinity
};

// One fitsResourceQuota call, kept to explain the answer.
struct QuotaCheck {
  std::string flavor;
  std::string resource;
  Int128 assumed = 0;  // earlier pod sets' requests on the same flavor
  Int128 request = 0;  // this pod set's request
  Int128 available = 0;
  Int128 potentialAvailable = 0;
  PreemptionMode mode = PreemptionMode::kNoFit;
  int borrow = 0;
  std::string borrowCohort;
  std::string reason;  // Kueue's status text; "" when it fits
  Int128 value() const { return assumed + request; }
};

struct FlavorChoice {  // upstream FlavorAssignment
  std::string flavor;
  AssignmentMode mode = AssignmentMode::kNoFit;
  PreemptionMode preemption = PreemptionMode::kNoFit;
  int borrow = 0;
  std::string borrowCohort;
};

struct RejectedFlavor {
  std::string flavor;
  std::string reason;
};

struct PodSetAssignment {
  std::string name;
  std::int32_t count = 0;
  std::map<std::string, Int128> requests;
  std::map<std::string, FlavorChoice> flavors;  // by resource
  std::vector<std::string> reasons;             // Status.reasons
  std::vector<RejectedFlavor> rejectedFlavors;  // every eligibility failure seen
  std::vector<std::string> uncovered;           // requested, but no resource group covers it
  std::vector<QuotaCheck> checks;               // every quota check made
  bool fit() const { return reasons.empty(); }  // Status.IsFit
  AssignmentMode representativeMode() const;
  std::string statusMessage() const;  // reasons sorted, joined ", "
};

struct Assignment {
  std::vector<PodSetAssignment> podSets;  // the pod sets evaluated, in order
  int borrowing = 0;                      // the largest borrowing height
  std::map<FlavorResource, Int128> usage;
  AssignmentMode representativeMode() const;
  // Assignment.Message: "couldn't assign flavors to pod set <ps>: <reasons>"
  // for each pod set that does not fit, joined "; ".
  std::string message() const;
};

struct AssignerContext {
  const ClusterState& state;  // ClusterQueue and ResourceFlavors
  const QuotaView& quota;     // usage without the workload being assigned
  std::string clusterQueue;
  PreemptionOracle oracle;  // required
  bool canPreemptWhileBorrowing = false;
  std::set<std::string> binaryResources;  // printed BinarySI in messages (kueue_units.h)
};

Assignment assignFlavors(const AssignerContext& ctx, const std::vector<PodSetRequest>& podSets);

}  // namespace ledger::replay::admission
