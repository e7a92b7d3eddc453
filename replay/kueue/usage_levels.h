// The levels a usage report integrates - reserved and admitted quota per
// (ClusterQueue, owner, flavor, resource) and nominal quota per
// (ClusterQueue, flavor, resource) - followed through the log and integrated
// into consecutive buckets, exactly (replay/kueue/integral.h).
//
// Reserved follows the contract: QuotaReserved=True and not Finished, the
// usage of status.admission (replay/kueue/workload_usage.h admissionUsage);
// admitted, the same workloads with Admitted=True. Nominal is
// spec.resourceGroups[].flavors[].resources[].nominalQuota of live
// ClusterQueues.
//
// A bucket names a key when a workload held it (or a live ClusterQueue
// named it) at the bucket's start, or a record touched it during the bucket,
// so the union of adjacent buckets names what one bucket over their union
// names, and their sums are its integrals: a report may add stored buckets
// instead of reading the records (replay/kueue/usage_rollups.h).
//
// Value types and a single-threaded integrator; UsageBucket::fromRollup
// throws ReplayError on bytes that are not a bucket, and integrateUsage on an
// unreadable ledger.
#pragma once

#include <capnp/common.h>

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ledger/ledger.h"
#include "replay/fold/cluster_state.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/integral.h"

namespace ledger::replay {

class HeldRecorder;

struct ReservedKey {
  std::string clusterQueue;
  std::string owner;  // the namespace, or NAMESPACE/NAME (Owner::kWorkload)
  std::string flavor;
  std::string resource;
  friend auto operator<=>(const ReservedKey&, const ReservedKey&) = default;
};

struct QuotaKey {
  std::string clusterQueue;
  std::string flavor;
  std::string resource;
  friend auto operator<=>(const QuotaKey&, const QuotaKey&) = default;
};

// Held and uncharged: what the pods of the key's workloads held through
// allocated ResourceClaims, in the resource's quota units, and the part of
// it beyond their charge (replay/kueue/held_tracker.h; a key's flavor is
// "-" where no single flavor charges the resource, its ClusterQueue "-" for
// pods of no Workload or a Workload never admitted).
struct ReservedIntegrals {
  Integral reserved;
  Integral admitted;
  Integral held;
  Integral uncharged;
  friend bool operator==(const ReservedIntegrals&, const ReservedIntegrals&) = default;
};

// schema/rollup.capnp's UsageBucket.version this build writes and reads;
// a bucket of another version is not used (usage_rollups.h rewrites them).
//   0  (unset) reserved, admitted and nominal.
//   1  adds held and uncharged.
inline constexpr std::uint32_t kUsageRollupVersion = 1;

struct UsageBucket {
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
  std::map<ReservedKey, ReservedIntegrals> reserved;
  std::map<QuotaKey, Integral> quota;

  // Adds the bucket that follows this one: this then covers both.
  void append(const UsageBucket& next);
  // Subtracts the integrals of `part`, a bucket whose keys this one names
  // (false, and this unchanged, when it names one this does not). Which keys
  // the difference should name is the caller's question (usage_rollups.cpp).
  bool subtract(const UsageBucket& part);
  // schema/rollup.capnp's UsageBucket, as a flat message; equal buckets give
  // equal bytes (verify compares them).
  std::string toRollup() const;
  static UsageBucket fromRollup(kj::ArrayPtr<const capnp::word> words);
  friend bool operator==(const UsageBucket&, const UsageBucket&) = default;
};

enum class Owner : std::uint8_t { kNamespace, kWorkload };

// Which keys to follow: every ClusterQueue's, or one's.
struct UsageScope {
  Owner owner = Owner::kNamespace;
  std::optional<std::string> clusterQueue;
};

// The level of each (ClusterQueue, resource) summed over flavors and owners
// after each change, for a chart: one point per instant that changed it.
struct StepPoint {
  std::int64_t timeNs;
  Quantity value;
};
struct UsageSteps {
  std::map<std::pair<std::string, std::string>, std::vector<StepPoint>> reserved;
  std::map<std::pair<std::string, std::string>, std::vector<StepPoint>> held;
  std::map<std::pair<std::string, std::string>, std::vector<StepPoint>> nominal;
};

// Integrates the log over [boundaries[0], boundaries[1]), [boundaries[1],
// boundaries[2]), ... (ascending, at least two): folds the state to the
// first boundary, then reads the records up to the last and calls onBucket
// with each bucket in order. A record at a boundary belongs to the bucket
// that ends there (it is folded into the next one's start).
//
// When `named` is given, it receives the keys named at the first boundary
// (held by a workload or named by a live ClusterQueue once the records up to
// that time are folded) and at the last: what a bucket starting there names
// from its start. Their integrals are zero.
struct NamedAtEnds {
  UsageBucket atStart;
  UsageBucket atEnd;
};
// Where the held levels come from: the stored ones where they cover the
// period and the options allow checkpoints (replay/kueue/held_record.h),
// else followed from the records; `record` (the rollups' writer) receives
// them as followed from the records, and then nothing stored is read.
struct HeldLevelsUse {
  bool readStored = true;
  HeldRecorder* record = nullptr;
};
void integrateUsage(const Ledger& ledger, const std::vector<std::int64_t>& boundaries,
                    const UsageScope& scope, const FoldOptions& options,
                    const std::function<void(UsageBucket&&)>& onBucket, UsageSteps* steps = nullptr,
                    NamedAtEnds* named = nullptr, HeldLevelsUse held = {});

}  // namespace ledger::replay
