// The state report narrowed to what one team asks about (docs/reference.md,
// "ledger-query state"): `--cluster-queue`, `--namespace`, `--findings-only`
// on `ledger-query state` and ledger-replay's state report.
//
// A pure function of its arguments; no shared state. Throws UsageError
// (tools/program.h) when the report holds no ClusterQueue of the name given,
// as `usage --cluster-queue` does: a misspelt name is not an empty answer.
#pragma once

#include <optional>
#include <string>

#include "replay/kueue/report.h"

namespace ledger::cli {

struct ReportFilter {
  std::optional<std::string> clusterQueue;
  std::optional<std::string> ns;
  bool findingsOnly = false;

  bool empty() const { return !clusterQueue && !ns && !findingsOnly; }
};

// Keeps the ClusterQueues named (with a namespace: those its workloads use),
// the workloads in both, the pools' allocations to those workloads (a pool
// with none left is dropped; its counters stay whole: they are the pool's),
// and the findings about a kept object. With findingsOnly only the findings
// are left. The moment, the digest and the configuration stay: they describe
// the whole state the rows come from.
void filterReport(replay::StateReport& report, const ReportFilter& filter);

}  // namespace ledger::cli
