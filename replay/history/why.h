// Why a workload waited and why it was evicted (ledger-query why): its life
// as intervals of one state, each pending interval with Kueue's reason as the
// Workload's QuotaReserved condition recorded it and what held the quota it
// was short of; and each eviction with its preemptor and whether the
// preemption followed the preempting ClusterQueue's spec.preemption at that
// moment (preemption_check.h). A preemption that does not conform raises the
// finding UnexpectedPreemption.
//
// Borrows the Ledger for the call. Throws ReplayError on an unreadable
// ledger. Not thread-safe (the admission evaluation builds a DRA context).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ledger/ledger.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/report.h"

namespace ledger::replay::history {

// One workload holding quota that another was short of.
struct Holding {
  std::string workload;  // namespace/name
  std::string clusterQueue;
  std::int32_t priority = 0;
  std::string flavor, resource;
  std::string amount;  // what it held of (flavor, resource), a Kubernetes quantity
};

struct WhyInterval {
  std::int64_t fromNs = 0;
  std::optional<std::int64_t> toNs;  // none: still so at the end of what was asked
  std::string state;                 // Pending, QuotaReserved, Admitted, Finished
  // Pending: Kueue's QuotaReserved condition (reason: message) as last
  // recorded in the interval; otherwise the condition that began it.
  std::string reason;
  // Pending: the holders of each (flavor, resource) it was short of when the
  // interval began, in its ClusterQueue and cohort tree, by workload.
  std::vector<Holding> blockedBy;
  // Pending: the admission check's own words for what was short (shortfall
  // reasons), or why it could not even be tried.
  std::vector<std::string> shortfalls;
};

struct EvictionExplained {
  std::uint64_t seq = 0;
  std::int64_t atNs = 0;
  std::string reason;         // the Evicted condition: reason: message
  bool preemption = false;    // the reason is Preempted
  std::string preemptor;      // namespace/name, "" when not resolved
  std::string preemptorFrom;  // "uid" (Kueue's message), "admittedNext", ""
  std::string policy;  // withinClusterQueue, reclaimWithinCohort, borrowWithinCohort, fairSharing
  std::optional<bool> conforms;  // none: not a preemption, or no preemptor found
  std::string explanation;
};

struct WhyReport {
  std::string workload;  // namespace/name
  bool found = false;
  std::vector<WhyInterval> intervals;
  std::vector<EvictionExplained> evictions;
  std::vector<Finding> findings;  // UnexpectedPreemption
};

WhyReport explainWorkload(const Ledger& ledger, const std::string& ns, const std::string& name,
                          std::optional<std::int64_t> fromNs, std::optional<std::int64_t> toNs,
                          const FoldOptions& fold = {});

}  // namespace ledger::replay::history
