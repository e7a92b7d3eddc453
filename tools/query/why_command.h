// ledger-query why NAMESPACE/NAME [--from TIME] [--to TIME]: the workload's
// life as intervals, what kept it pending, and each eviction's preemptor and
// whether the preemption conformed (replay/history/why.h), as JSON or tables.
//
// Throws UsageError on bad arguments, UnknownWorkload (a UsageError, so the
// CLI exits as for any usage error; serve answers it 404) for a workload the
// ledger never saw, ReplayError on an unreadable ledger.
#pragma once

#include <ostream>

#include "ledger/ledger.h"
#include "tools/query_commands.h"

namespace ledger::cli {

class UnknownWorkload : public UsageError {
 public:
  using UsageError::UsageError;
};

int runWhy(const Ledger& ledger, const QueryArgs& args, std::ostream& out);

}  // namespace ledger::cli
