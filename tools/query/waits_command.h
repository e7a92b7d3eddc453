// ledger-query waits --from TIME --to TIME [--by cluster-queue|namespace|
// local-queue]: per group, the admissions of the period, their p50/p95/max
// wait and the workloads still pending at its end (replay/kueue/workload_waits.h),
// as JSON, a table or CSV.
//
// Throws UsageError on bad arguments, ReplayError on an unreadable ledger.
#pragma once

#include <ostream>

#include "ledger/ledger.h"
#include "tools/query_commands.h"

namespace ledger::cli {

int runWaits(const Ledger& ledger, const QueryArgs& args, std::ostream& out);

}  // namespace ledger::cli
