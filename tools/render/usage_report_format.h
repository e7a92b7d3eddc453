// Printing a report over a period (ledger-query report, docs/reference.md
// "Report over a period"): JSON, CSV and the table, from the rows and their
// totals per resource (replay/kueue/usage_report.h).
//
// Key columns name a row's group: one `group` column for a single --by
// dimension (as before keys could be joined), one per dimension otherwise;
// the fleet's report puts a `cluster` column first. The numbers after them
// are a list of columns per form (kTableColumns, kCsvColumns), so a new
// integral is one entry in each. Table and CSV end with a total row per
// resource; JSON has them as `totals`.
//
// Pure functions; thread-safe; never throw but std::bad_alloc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "replay/kueue/usage_report.h"

namespace ledger::render {

// A column before the numbers: its table header, CSV column and JSON field,
// and a second JSON field with the same value (a single dimension's name
// beside `group`), empty for none.
struct KeyColumn {
  std::string header, csv, field, alsoField;
};
// `group` (GROUP) for a single dimension, else one column per dimension.
std::vector<KeyColumn> keyColumns(const replay::Grouping& by);

// A row as printed: one cell per key column, then its numbers.
struct ReportLine {
  std::vector<std::string> keys;
  const replay::UsageRow* row;
};
// The rows of a period with their group values as key cells.
std::vector<ReportLine> reportLines(const std::vector<replay::UsageRow>& rows);

// A JSON row: the key fields, `resource`, then the integrals
// (putUsageIntegrals).
nlohmann::ordered_json reportRowJson(const std::vector<KeyColumn>& keys, const ReportLine& line);
// `totals`: [{"resource", integrals...}].
nlohmann::ordered_json totalsJson(const std::vector<replay::UsageRow>& totals);

// The CSV header and lines, totals last (`total` in the first key cell).
std::string reportCsv(const std::vector<KeyColumn>& keys, const std::vector<ReportLine>& lines,
                      const std::vector<replay::UsageRow>& totals);
// The table, totals last (`TOTAL` in the first key cell).
std::string reportTable(const std::vector<KeyColumn>& keys, const std::vector<ReportLine>& lines,
                        const std::vector<replay::UsageRow>& totals);

}  // namespace ledger::render
