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
  // Read through object_index; false after a full scan (a ledger whose
  // index does not cover every record: `ledger-replay rebuild-projection`).
  bool indexed = false;
  std::vector<HistoryEntry> entries;
};

// Reads, through object_index (ledger/format.h), the records of the
// workload, of the objects referring to its uid or its owners' uids (its
// pods, claims it owns), and of the objects referring to those (the pods'
// claims), up to `toNs`, in seq order: every record that changes what the
// full scan finds, so the result is the scan's. A ledger whose index is not
// complete is scanned (workloadHistoryScan). `progress`, when set, is called
// now and then with (records read, records to read).
WorkloadHistory workloadHistory(
    const Ledger& ledger, const std::string& ns, const std::string& name,
    std::optional<std::int64_t> fromNs, std::optional<std::int64_t> toNs,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

// The same from a scan of the log from its start, without the index.
WorkloadHistory workloadHistoryScan(
    const Ledger& ledger, const std::string& ns, const std::string& name,
    std::optional<std::int64_t> fromNs, std::optional<std::int64_t> toNs,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

}  // namespace ledger::replay
