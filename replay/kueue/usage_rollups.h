// Usage rollups: the buckets of replay/kueue/usage_levels.h stored per hour,
// day and calendar month (UTC), as Slurm's sreport answers from its hourly,
// daily and monthly tables, so a report over any period adds a few dozen
// stored buckets and integrates only the partial hours at its edges.
//
// Grain: reserved and admitted per (ClusterQueue, namespace, flavor,
// resource), nominal per (ClusterQueue, flavor, resource): enough for the
// reports grouped by ClusterQueue or namespace, with or without one
// ClusterQueue, and for the time series. Reports by workload read the log.
//
// Coverage: hours from the calendar month of the first record up to the last
// whole hour that ended before the ledger's head time (a later record can
// still land at the head's time, so the hour holding it is open); every day
// and month inside. Derived data: writing, dropping or damaging them changes
// no answer (a damaged one is reported and the period read from the log),
// and verifyUsageRollups proves each equals a fresh integration.
//
// Thread-compatible. Throws ReplayError when the ledger cannot be read or
// written, or (usageFromRollups) when a stored bucket is missing or damaged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ledger/ledger.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/usage_levels.h"

namespace ledger::replay {

inline constexpr std::int64_t kHourNs = 3600LL * 1000000000LL;

// Writes the buckets the coverage gained since the last call, and the
// stored wait data (wait_rollups.h writeWaitRollups); returns how many
// values. Needs a writable ledger of format 4 or later.
std::uint64_t writeUsageRollups(Ledger& ledger, const FoldOptions& options = {});

// [startNs, endNs) of the stored hours; nullopt when none are.
struct RollupCoverage {
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
};
std::optional<RollupCoverage> usageRollupCoverage(const Ledger& ledger);

// The usage of [fromNs, toNs) for every ClusterQueue (owner = namespace):
// stored buckets for the whole hours the coverage holds, the rest
// integrated from the log. Equal to integrateUsage over [fromNs, toNs).
// Adds the number of stored buckets it read to *storedRead when given.
UsageBucket usageFromRollups(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                             const FoldOptions& options = {}, std::uint64_t* storedRead = nullptr);

// Consecutive buckets [boundaries[i], boundaries[i+1]) as integrateUsage
// gives them, in order to onBucket, served from rollups where a bucket is
// whole stored hours. One at a time: a month of hours for every queue is
// more than a series needs to hold at once.
void usageSeries(const Ledger& ledger, const std::vector<std::int64_t>& boundaries,
                 const FoldOptions& options, const std::function<void(UsageBucket&&)>& onBucket);

// The version of the stored rollups (the first bucket's), nullopt when none
// are stored.
std::optional<std::uint32_t> storedRollupVersion(const Ledger& ledger);

struct RollupVerification {
  std::uint64_t checked = 0;
  // Stored by an earlier build (another kUsageRollupVersion): not checked,
  // never read, rewritten by the next writer.
  bool olderVersion = false;
  std::string firstBad;  // the bucket, e.g. "hour 2026-11-20T08:00:00Z"; empty: all sound
  std::string problem;
};
// Integrates the whole covered history again and compares every stored
// bucket, and that nothing is stored outside the coverage; then the stored
// wait data beside them (wait_rollups.h verifyWaitRollups, firstBad e.g.
// "wait state after seq 16384").
RollupVerification verifyUsageRollups(const Ledger& ledger);

}  // namespace ledger::replay
