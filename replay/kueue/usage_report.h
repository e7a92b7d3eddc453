// Usage over a period (ledger-query report): the integral of reserved quota
// over time per group (ClusterQueue, namespace, workload, flavor or several
// of them, usage_grouping.h) and resource, in resource-seconds, beside the
// integral of nominal quota (quota-seconds, per ClusterQueue, or per
// ClusterQueue and flavor) so utilisation is visible; and their totals per
// resource. Reserved follows the contract:
// QuotaReserved=True and not Finished, resourceUsage of status.admission
// (replay/kueue/usage_levels.h). Exact (replay/kueue/integral.h): equal runs
// print equal digits, and a report served from usage rollups prints the
// digits the log's integration prints. Also records, when asked, the step
// series of reserved and nominal per (ClusterQueue, resource) for the SVG
// chart.
//
// Borrows the Ledger. Throws ReplayError on an unreadable ledger.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ledger/ledger.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/integral.h"
#include "replay/kueue/usage_grouping.h"
#include "replay/kueue/usage_levels.h"

namespace ledger::replay {

// reserved / quota in percent with two decimals, truncated ("87.50%"); empty
// when the quota integral is zero. Exact at any magnitude.
std::string utilisation(const Integral& reserved, const Integral& quota);

struct UsageRow {
  // One value per dimension of the grouping, in its order; empty in a total.
  std::vector<std::string> groupValues;
  std::string group;  // groupValues joined by commas
  std::string resource;
  Integral reserved;
  std::optional<Integral> quota;  // when the grouping carriesQuota()
  // Held and uncharged (usage_levels.h ReservedIntegrals); `dra` when some
  // pod held the resource through a ResourceClaim in the period, in any
  // group: the rows of such a resource carry them, zero or not.
  Integral held;
  Integral uncharged;
  bool dra = false;

  // Adds `other`'s integrals (and quota, when it has one): rows summed into
  // a total, or the same group's rows of several clusters.
  void addIntegrals(const UsageRow& other);
};

struct UsagePeriod {
  std::int64_t fromNs = 0;
  std::int64_t toNs = 0;
  // State folded up to here at `from`; 0 before a cut ledger's cut.
  std::uint64_t fromSeq = 0;
  std::uint64_t toSeq = 0;
  Grouping by;
  std::vector<UsageRow> rows;    // sorted by group values, resource
  std::vector<UsageRow> totals;  // per resource, the sum of its rows (usageTotals)
  // (ClusterQueue, resource) -> steps, for charts; empty unless asked for
  // (a step per change: on the 10M-record ledger, 45 MB for ten days).
  std::map<std::pair<std::string, std::string>, std::vector<StepPoint>> reservedSteps;
  std::map<std::pair<std::string, std::string>, std::vector<StepPoint>> nominalSteps;
  std::map<std::pair<std::string, std::string>, std::vector<StepPoint>> heldSteps;
  // Why stored rollups could not serve the period (it was read from the
  // log instead); empty when they did or were not asked.
  std::string rollupProblem;
  std::uint64_t rollupBucketsRead = 0;  // stored buckets the period added up
};

enum class ChartSteps : std::uint8_t { kOmit, kKeep };

// Where the integrals come from: the usage rollups where they cover whole
// hours (replay/kueue/usage_rollups.h; grouping by workload and charts read
// the log), or the log alone. Both give the same digits; every grouping
// without workload is served from rollups (their grain keeps namespaces
// and flavors).
enum class UsageSource : std::uint8_t { kRollupsWhereStored, kLog };

UsagePeriod computeUsagePeriod(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                               const Grouping& by, const std::optional<std::string>& clusterQueue,
                               const FoldOptions& options = {},
                               ChartSteps steps = ChartSteps::kKeep,
                               UsageSource source = UsageSource::kRollupsWhereStored);

// The rows of `bucket` grouped by `by` (the bucket's owner is its namespace,
// or its workload when `by` has workload), only `clusterQueue`'s when given.
std::vector<UsageRow> usageRows(const UsageBucket& bucket, const Grouping& by,
                                const std::optional<std::string>& clusterQueue);

// Per resource, the sum of `rows` (exact), as a row with no group values;
// its quota is the sum of the rows' quotas when some row has one.
std::vector<UsageRow> usageTotals(const std::vector<UsageRow>& rows);

// "GiB-hours" for byte quantities (memory, storage, *.memory), else "hours".
bool isByteResource(const std::string& resource);

}  // namespace ledger::replay
