// What kept a pending workload out at one moment: the admission evaluation
// `ledger-query admit` runs (replay/admission/admission.h) says which
// (flavor, resource) it was short of; the holders are every workload holding
// quota of that (flavor, resource) in its ClusterQueue or the cohort tree
// that ClusterQueue belongs to (what Kueue's flavor assigner counts against
// it: pkg/cache ClusterQueueSnapshot.Available over the cohort tree), with
// the amount each held (admissionUsage).
//
// Borrows the state for the call. Not thread-safe (the evaluation builds a
// DRA context); never throws except std::bad_alloc.
#pragma once

#include <string>
#include <vector>

#include "replay/fold/cluster_state.h"
#include "replay/history/why.h"

namespace ledger::replay::history {

struct Blocked {
  std::vector<Holding> holders;         // by workload, then flavor and resource
  std::vector<std::string> shortfalls;  // in plain words, in check order
};

// Empty when the workload is not live in `state`, or fits.
Blocked blockedAt(const ClusterState& state, const std::string& ns, const std::string& name);

// The Workload's QuotaReserved condition in `state` as "reason: message"
// ("" when it has none or is not live).
std::string quotaReservedText(const ClusterState& state, const std::string& ns,
                              const std::string& name);

}  // namespace ledger::replay::history
