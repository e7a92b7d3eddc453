#include "replay/kueue/usage_report.h"

#include "replay/kueue/usage_rollups.h"

#include <set>

namespace ledger::replay {

std::string utilisation(const Integral& reserved, const Integral& quota) {
  const Int256 quotaSeconds = quota.nanoUnitSeconds();
  if (quotaSeconds == 0) return "";
  // Basis points, truncated toward zero; the sign printed once, so a
  // negative value never shows a negative fraction.
  Int256 bp = reserved.nanoUnitSeconds() * 10000 / quotaSeconds;
  std::string out;
  if (bp < 0) {
    out.push_back('-');
    bp = -bp;
  }
  std::string cents = Int256(bp % 100).str();
  if (cents.size() < 2) cents.insert(cents.begin(), '0');
  out += Int256(bp / 100).str();
  out += "." + cents + "%";
  return out;
}

bool isByteResource(const std::string& r) {
  return r == "memory" || r == "ephemeral-storage" || r.rfind("hugepages-", 0) == 0 ||
         (r.size() > 7 && r.compare(r.size() - 7, 7, ".memory") == 0);
}

namespace {

std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

}  // namespace

std::vector<UsageRow> usageRows(const UsageBucket& bucket, const Grouping& by,
                                const std::optional<std::string>& clusterQueue) {
  std::map<std::pair<std::vector<std::string>, std::string>, UsageRow> rows;
  auto rowOf = [&](std::vector<std::string>&& group, const std::string& resource) -> UsageRow& {
    UsageRow& row = rows[{group, resource}];
    if (row.resource.empty()) {
      row.group = joined(group);
      row.groupValues = std::move(group);
      row.resource = resource;
    }
    return row;
  };
  std::set<std::string> held;  // resources some pod held through a claim
  for (const auto& [key, totals] : bucket.reserved) {
    if (clusterQueue && key.clusterQueue != *clusterQueue) continue;
    UsageRow& row = rowOf(by.groupOf(key), key.resource);
    row.reserved += totals.reserved;
    row.held += totals.held;
    row.uncharged += totals.uncharged;
    if (!totals.held.isZero()) held.insert(key.resource);
  }
  if (by.carriesQuota()) {
    for (const auto& [key, integral] : bucket.quota) {
      if (clusterQueue && key.clusterQueue != *clusterQueue) continue;
      UsageRow& row = rowOf(by.groupOf(key), key.resource);
      if (!row.quota) row.quota = Integral();
      *row.quota += integral;
    }
  }
  std::vector<UsageRow> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) {
    row.dra = held.contains(row.resource);
    out.push_back(std::move(row));
  }
  return out;
}

void UsageRow::addIntegrals(const UsageRow& other) {
  reserved += other.reserved;
  held += other.held;
  uncharged += other.uncharged;
  dra = dra || other.dra;
  if (other.quota) {
    if (!quota) quota = Integral();
    *quota += *other.quota;
  }
}

std::vector<UsageRow> usageTotals(const std::vector<UsageRow>& rows) {
  std::map<std::string, UsageRow> totals;
  for (const UsageRow& r : rows) {
    UsageRow& total = totals[r.resource];
    total.resource = r.resource;
    total.addIntegrals(r);
  }
  std::vector<UsageRow> out;
  out.reserve(totals.size());
  for (auto& [resource, total] : totals) out.push_back(std::move(total));
  return out;
}

UsagePeriod computeUsagePeriod(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                               const Grouping& by, const std::optional<std::string>& clusterQueue,
                               const FoldOptions& options, ChartSteps steps, UsageSource source) {
  if (toNs < fromNs) throw ReplayError("--to is before --from");
  UsagePeriod out;
  out.fromNs = fromNs;
  out.toNs = toNs;
  out.by = by;
  const Replayer replayer(ledger);
  // On a cut ledger a period may start in the hours before the cut, which
  // the rollups answer: no seq of the ledger is there (0).
  const auto& cut = ledger.archiveCut();
  out.fromSeq = cut && fromNs < cut->timeNs ? 0 : replayer.seqAt(fromNs);
  out.toSeq = cut && toNs < cut->timeNs ? 0 : replayer.seqAt(toNs);
  UsageBucket bucket;
  bool served = false;
  if (source == UsageSource::kRollupsWhereStored && !by.byWorkload() &&
      steps == ChartSteps::kOmit) {
    try {
      bucket = usageFromRollups(ledger, fromNs, toNs, options, &out.rollupBucketsRead);
      served = true;
    } catch (const ReplayError& e) {
      // Derived data never changes an answer: a damaged rollup is named and
      // the period read from the log.
      if (!e.corrupt()) throw;
      out.rollupProblem = e.what();
      out.rollupBucketsRead = 0;
    }
  }
  if (!served) {
    UsageScope scope;
    scope.owner = by.byWorkload() ? Owner::kWorkload : Owner::kNamespace;
    scope.clusterQueue = clusterQueue;
    UsageSteps chart;
    integrateUsage(
        ledger, {fromNs, toNs}, scope, options, [&](UsageBucket&& b) { bucket = std::move(b); },
        steps == ChartSteps::kKeep ? &chart : nullptr);
    out.reservedSteps = std::move(chart.reserved);
    out.nominalSteps = std::move(chart.nominal);
    out.heldSteps = std::move(chart.held);
  }
  out.rows = usageRows(bucket, by, clusterQueue);
  out.totals = usageTotals(out.rows);
  return out;
}

}  // namespace ledger::replay
