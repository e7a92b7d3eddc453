#include "replay/kueue/workload_waits.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "replay/fold/replayer.h"
#include "replay/kueue/wait_follower.h"
#include "replay/kueue/wait_store.h"

namespace ledger::replay {

WaitGrouping parseWaitGrouping(std::string_view text) {
  if (text == "cluster-queue") return WaitGrouping::kClusterQueue;
  if (text == "namespace") return WaitGrouping::kNamespace;
  if (text == "local-queue") return WaitGrouping::kLocalQueue;
  throw std::invalid_argument("waits are grouped by cluster-queue, namespace or local-queue");
}

const char* waitGroupingText(WaitGrouping by) {
  switch (by) {
    case WaitGrouping::kNamespace:
      return "namespace";
    case WaitGrouping::kLocalQueue:
      return "local-queue";
    case WaitGrouping::kClusterQueue:
      break;
  }
  return "cluster-queue";
}

std::optional<std::int64_t> nearestRank(const std::vector<std::int64_t>& sortedNs, int percent) {
  if (sortedNs.empty()) return std::nullopt;
  // rank = ceil(percent * n / 100), at least 1.
  const std::size_t n = sortedNs.size();
  std::size_t rank = (static_cast<std::size_t>(percent) * n + 99) / 100;
  rank = std::clamp<std::size_t>(rank, 1, n);
  return sortedNs[rank - 1];
}

WaitsReport workloadWaits(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                          WaitGrouping by,
                          const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  WaitFollower follower(by);
  std::map<std::string, WaitGroup> groups;
  const auto onAdmission = [&](const std::string& group, std::int64_t waitNs, std::int64_t atNs) {
    if (atNs >= fromNs && atNs < toNs) groups[group].waitsNs.push_back(waitNs);
  };
  // The records before toNs: the last at or before toNs - 1.
  const std::uint64_t last = Replayer(ledger).seqAt(toNs - 1);
  std::uint64_t done = 0;
  // On a cut ledger, from the follower's state the cut carried (none when
  // it carried none: then from the cut).
  const std::uint64_t from = restoreWaitState(ledger, 0, follower);
  if (last > from) {
    Status st = ledger.scanProjections(from + 1, last,
                                       [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
                                         if (progress && (++done & 0xFFFF) == 0)
                                           progress(done, last);
                                         follower.record(r, onAdmission);
                                         return true;
                                       });
    if (!st.isOk()) throw ReplayError(st);
  }
  if (progress) progress(last, last);
  return waitsReportOf(fromNs, toNs, by, groups, follower);
}

}  // namespace ledger::replay
