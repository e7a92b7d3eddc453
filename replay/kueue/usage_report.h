// Usage over a period (ledger-query report): the integral of reserved quota
// over time per group (ClusterQueue, namespace or workload) and resource, in
// resource-seconds, beside the integral of nominal quota (quota-seconds, per
// ClusterQueue) so utilisation is visible. Reserved follows the contract:
// QuotaReserved=True and not Finished, resourceUsage of status.admission.
//
// Exact: integrals are kept as integers of nano-unit-seconds (no floating
// point), so equal runs print equal digits. They are 256-bit: a level reaches
// 2^127 nano-units (Quantity's range) and a period 2^64 ns (the ledger's
// time range), so an integral needs up to 2^191 and printing it with nine
// decimals another 2^30 - beyond __int128, which wrapped (128Ti of memory for
// 30 days printed 2.0e19 quota-seconds instead of 3.6e20). Boost's
// checked_int256_t throws std::overflow_error rather than wrap, which these
// bounds never reach. Also records the step series of
// reserved and nominal per (ClusterQueue, resource) for the SVG chart.
//
// Borrows the Ledger. Throws ReplayError on an unreadable ledger.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/multiprecision/cpp_int.hpp>

#include "ledger/ledger.h"
#include "replay/fold/replayer.h"
#include "schema/k8s/quantity.h"

namespace ledger::replay {

// Signed 256-bit, checked (see above); header-only Boost.Multiprecision.
using Int256 = boost::multiprecision::checked_int256_t;

enum class GroupBy { kClusterQueue, kNamespace, kWorkload };

// An exact integral: resource nano-units x seconds, with the sub-second part
// carried in nano-units x ns below 1e9 so nothing is rounded until printing.
class Integral {
 public:
  void add(const Quantity& level, std::int64_t durationNs);
  const Int256& nanoUnitSeconds() const { return whole_; }
  // Resource-seconds / hours as exact decimals (hours rounded half-up at 6 digits).
  std::string seconds() const;
  std::string hours(Int128 divisor = 1) const;
  bool isZero() const { return whole_ == 0 && fraction_ == 0; }

 private:
  Int256 whole_ = 0;     // nano-unit-seconds
  Int256 fraction_ = 0;  // nano-unit-ns, always < 1e9 in magnitude
};

// reserved / quota in percent with two decimals, truncated ("87.50%"); empty
// when the quota integral is zero. Exact at any magnitude.
std::string utilisation(const Integral& reserved, const Integral& quota);

struct UsageRow {
  std::string group;
  std::string resource;
  Integral reserved;
  std::optional<Integral> quota;  // grouped by ClusterQueue only
};

struct StepPoint {
  std::int64_t timeNs;
  Quantity value;
};

struct UsagePeriod {
  std::int64_t fromNs = 0;
  std::int64_t toNs = 0;
  std::uint64_t fromSeq = 0;  // state folded up to here at `from`
  std::uint64_t toSeq = 0;
  GroupBy by = GroupBy::kClusterQueue;
  std::vector<UsageRow> rows;  // sorted by group, resource
  // (ClusterQueue, resource) -> steps, for charts; empty unless asked for
  // (a step per change: on the 10M-record ledger, 45 MB for ten days).
  std::map<std::pair<std::string, std::string>, std::vector<StepPoint>> reservedSteps;
  std::map<std::pair<std::string, std::string>, std::vector<StepPoint>> nominalSteps;
};

enum class ChartSteps : std::uint8_t { kOmit, kKeep };

UsagePeriod computeUsagePeriod(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                               GroupBy by, const std::optional<std::string>& clusterQueue,
                               const FoldOptions& options = {},
                               ChartSteps steps = ChartSteps::kKeep);

// "GiB-hours" for byte quantities (memory, storage, *.memory), else "hours".
bool isByteResource(const std::string& resource);

}  // namespace ledger::replay
