// One eviction explained: its preemptor and whether the preemption followed
// the preempting ClusterQueue's spec.preemption at that moment, as Kueue's
// classical preemption states its rules (pkg/scheduler/preemption/classical
// hierarchical_preemption.go classifyPreemptionVariant,
// priorityTooHighToPreempt, isAboveBorrowingThreshold, and
// candidate_generator.go candidateIsValid; docs/kueue-preemption-rules.md
// names the rule each check follows).
//
// The preemptor is the workload whose UID Kueue's message names ("Preempted
// to accommodate a workload (UID: ..., JobUID: ...) due to ..."), live just
// before the eviction; else the first workload of the victim's cohort tree
// (or ClusterQueue) to reserve quota after it that was not reserving before.
//
// Borrows the Ledger for the call. Throws ReplayError on an unreadable
// ledger. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "ledger/ledger.h"
#include "replay/fold/replayer.h"
#include "replay/history/why.h"

namespace ledger::replay::history {

// The eviction recorded at `seq` of the workload ns/name; the preemptor's
// reservation is looked for up to `lastSeq`.
EvictionExplained explainEviction(const Ledger& ledger, const std::string& ns,
                                  const std::string& name, std::uint64_t seq, std::uint64_t lastSeq,
                                  const FoldOptions& fold);

// Kueue's PreemptionPolicy on priorities (priorityTooHighToPreempt, negated):
// LowerPriority, LowerOrNewerEqualPriority (queue order: the earlier
// creation), Any; Never or "" allows nothing.
bool policyAllows(const std::string& policy, std::int32_t preemptorPriority,
                  std::int32_t victimPriority, std::int64_t preemptorQueuedNs,
                  std::int64_t victimQueuedNs);

}  // namespace ledger::replay::history
