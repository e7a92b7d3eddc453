// How long workloads waited for admission over a period (ledger-query waits):
// per group, the admissions in the period, the nearest-rank p50/p95 and the
// maximum of their waits, and the workloads still pending at the period's end.
//
// A wait is the admission's time (the record at which the Workload's Admitted
// condition turned True) minus the time the workload was queued: Kueue's rule
// (pkg/workload QueuedWaitTime, what its admission_wait_time_seconds metric
// observes) is the creationTimestamp, or the Requeued condition's
// lastTransitionTime once there is one. A ledger may not record that
// condition (Kueue before 0.9, a relist), so the time of the record at which
// the workload lost its quota reservation (QuotaReserved True -> False while
// not Finished: an eviction or a requeue) counts as a requeue too; the latest
// of the three wins. A workload first recorded already admitted (admitted
// before the ledger observed it) has no measured wait.
//
// Borrows the Ledger. Throws ReplayError on an unreadable ledger,
// std::invalid_argument on a bad grouping text. Thread-safe as the Ledger is.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/ledger.h"

namespace ledger::replay {

enum class WaitGrouping { kClusterQueue, kNamespace, kLocalQueue };

// "cluster-queue", "namespace" or "local-queue"; throws std::invalid_argument.
WaitGrouping parseWaitGrouping(std::string_view text);
const char* waitGroupingText(WaitGrouping by);

struct WaitGroup {
  // The ClusterQueue (status.admission's, else the LocalQueue's at the
  // period's end; empty when neither names one), the namespace, or
  // "namespace/localQueue".
  std::string key;
  std::vector<std::int64_t> waitsNs;  // one per admission in the period, ascending
  std::uint64_t stillPending = 0;     // not Admitted, not Finished at the period's end
};

struct WaitsReport {
  std::int64_t fromNs = 0, toNs = 0;
  WaitGrouping by = WaitGrouping::kClusterQueue;
  std::vector<WaitGroup>
      groups;  // by key; a group appears once it has an admission or a pending one
};

// The nearest-rank percentile of `sortedNs` (ascending): the value at rank
// ceil(percent/100 * n), 1-based; nullopt when empty. Exact: no
// interpolation, always one of the samples.
std::optional<std::int64_t> nearestRank(const std::vector<std::int64_t>& sortedNs, int percent);

// One forward pass over the records before `toNs` (from the log's first: a
// wait may start long before the period; on a cut ledger from the wait
// follower's state the cut carried, wait_store.h, so the answer is the
// whole history's). Throws ReplayError (corrupt) when that state does not
// decode. Admissions count when
// fromNs <= time < toNs; pending is the state after the last record before
// toNs. `progress`, when set, is called now and then with (records read,
// records to read).
WaitsReport workloadWaits(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                          WaitGrouping by,
                          const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

}  // namespace ledger::replay
