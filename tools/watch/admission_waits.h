// The --watch daemon's waits per ClusterQueue on /metrics, over the ledger's
// whole history and without a per-workload label (cardinality follows the
// ClusterQueues, never the workloads):
//
//   ledger_admission_wait_time_seconds{cluster_queue}   histogram
//   ledger_pending_workloads{cluster_queue}             gauge
//
// The histogram mirrors Kueue's kueue_admission_wait_time_seconds
// (pkg/metrics: the time between a workload was created or requeued until
// admission, buckets generateExponentialBuckets(14): 1, then 2.5 doubling
// to 10240 s), each admission observed once as its record is followed
// (replay::WaitFollower, the rule `ledger-query waits` uses). The gauge is
// Kueue's kueue_pending_workloads summed over its status label (active and
// inadmissible, which the ledger cannot tell apart): the workloads neither
// admitted nor finished after the last record followed.
//
// Follows the writer: at start, the stored wait data (replay/kueue/
// wait_rollups.h: every stored hour's admissions, and the follower's state
// stored before the first hour not stored, then the records after it), or
// one pass over the history when none is usable; then only the records of
// each commit, so a scrape costs the ClusterQueues' series, never the
// history. On an archived ledger the stored hours before the cut stay; when
// they are not usable, the pass starts from the follower's state the cut
// carried (workloads pending across the cut are measured, the admissions
// of archived records are not), or from the cut when it carried none.
//
// Not thread-safe: the caller serialises (LiveState's lock). Errors:
// follow() throws replay::ReplayError when the records cannot be read.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "ledger/ledger.h"
#include "replay/kueue/wait_follower.h"

namespace ledger::cli {

// Kueue's generateExponentialBuckets(14): append({1}, ExponentialBuckets(2.5, 2, 13)).
inline constexpr std::array<double, 14> kAdmissionWaitBuckets = {
    1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240};

class AdmissionWaits {
 public:
  // Follows the records after the last one followed up to `lastSeq`.
  void follow(const Ledger& ledger, std::uint64_t lastSeq);
  std::uint64_t seq() const { return seq_; }
  // Whether the first follow() started from the stored wait data.
  bool startedFromStored() const { return startedFromStored_; }
  // The two metrics in the exposition format (empty before any workload).
  std::string metricsText() const;

  // One observation, as follow() makes it (for tests).
  void observe(const std::string& clusterQueue, std::int64_t waitNs);

 private:
  struct Histogram {
    std::array<std::uint64_t, kAdmissionWaitBuckets.size()> buckets{};  // not cumulative
    std::uint64_t count = 0;
    std::int64_t sumNs = 0;
  };
  // The first follow(): from the stored wait data when usable.
  bool restore(const Ledger& ledger, std::uint64_t lastSeq);
  // The follower from the state a cut carried; the seq it holds after.
  std::uint64_t carriedState(const Ledger& ledger);

  replay::WaitFollower follower_{replay::WaitGrouping::kClusterQueue};
  std::map<std::string, Histogram> histograms_;
  std::uint64_t seq_ = 0;
  bool restored_ = false;
  bool startedFromStored_ = false;
  // Admissions before this time were observed from the stored hours.
  std::int64_t handedBeforeNs_ = INT64_MIN;
};

}  // namespace ledger::cli
