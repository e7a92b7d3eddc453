// `ledger-query report --from TIME --to TIME [--by GROUPING]` (docs/reference.md
// "Report over a period"): the integral of reserved quota per group and
// resource over the period, with its totals, as JSON, CSV or a table
// (tools/render/usage_report_format.h); one line when the period runs past
// the ledger's last record, and the coverage warnings of the period.
//
// Errors: throws UsageError for bad arguments, ReplayError when the ledger
// cannot be read. Not thread-safe (the progress bar, the SVG file).
#pragma once

#include <ostream>
#include <string>

#include "replay/kueue/usage_grouping.h"
#include "tools/query_commands.h"

namespace ledger::cli {

int runReport(const Ledger& ledger, const QueryArgs& args, std::ostream& out);

// --by as a grouping (usage_grouping.h); UsageError naming what it takes.
replay::Grouping groupingArg(const std::string& by);

}  // namespace ledger::cli
