// One workload's life (ledger-query workload NS/NAME): every change of its
// state - created, quota reserved, admitted, evicted, requeued, finished,
// deleted - and of its recorded charge, its reclaimable pods or ClusterQueue,
// with time and seq; plus the DRA devices its pods held (claim allocated / released) and when.
// Devices are attributed as the audit does: claim -> Pod -> owner uid shared
// with the Workload.
//
// Borrows the Ledger. Throws ReplayError on an unreadable ledger.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ledger/ledger.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/resources.h"

namespace ledger::replay {

struct HistoryEntry {
  std::uint64_t seq = 0;
  std::int64_t timeNs = 0;
  std::string event;  // Created, QuotaReserved, Admitted, Evicted, Requeued, Finished, Deleted,
                      // ChargeChanged, ReclaimablePodsChanged, ClusterQueueChanged,
                      // DeviceAllocated, DeviceReleased
  std::string state;  // the workload's state after the change
  std::string clusterQueue;
  ResourceList recorded;  // after the change: status.admission's resourceUsage
  // What it holds in its ClusterQueue after the change: `recorded` scaled
  // down by status.reclaimablePods (workload_usage.h admissionUsage).
  ResourceList usage;
  std::string detail;  // condition reason/message, or the device and claim
};

struct WorkloadHistory {
  std::string ns, name;
  bool found = false;  // the workload appears in the log at all
  std::vector<HistoryEntry> entries;
};

// Scans the log from its start (a workload's pods and claims are matched
// by owner, which only a scan finds) up to `toNs`. `progress`, when set, is
// called now and then with (records scanned, records to scan).
WorkloadHistory workloadHistory(
    const Ledger& ledger, const std::string& ns, const std::string& name,
    std::optional<std::int64_t> fromNs, std::optional<std::int64_t> toNs,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

}  // namespace ledger::replay
