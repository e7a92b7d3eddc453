#include "tools/report_command.h"

#include <fstream>
#include <iostream>
#include <stdexcept>

#include "replay/fold/observations.h"
#include "replay/kueue/usage_report.h"
#include "schema/k8s/rfc3339.h"
#include "tools/progress.h"
#include "tools/render/coverage_format.h"
#include "tools/render/usage_chart.h"
#include "tools/render/usage_report_format.h"

namespace ledger::cli {

namespace {

replay::UsagePeriod integratePeriod(const Ledger& ledger, const QueryArgs& args,
                                    const replay::Grouping& by) {
  ProgressBar progress("report");
  replay::FoldOptions fo;
  fo.useCheckpoints = args.useCheckpoints;
  fo.progress = progress.callback();
  fo.onBadCheckpoint = warnBadCheckpoint;
  auto period = replay::computeUsagePeriod(
      ledger, *args.from, *args.to, by, args.clusterQueue, fo,
      args.svg ? replay::ChartSteps::kKeep : replay::ChartSteps::kOmit,
      args.useCheckpoints ? replay::UsageSource::kRollupsWhereStored : replay::UsageSource::kLog);
  progress.done();
  if (!period.rollupProblem.empty()) {
    std::cerr << "warning: " << period.rollupProblem
              << "; the period was read from the log (`ledger-replay checkpoint --rewrite` "
                 "writes the rollups anew)\n";
  }
  return period;
}

}  // namespace

replay::Grouping groupingArg(const std::string& by) {
  try {
    return replay::parseGrouping(by);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--by '" + by + "': " + e.what());
  }
}

int runReport(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  if (!args.from || !args.to) throw UsageError("report needs --from TIME and --to TIME");
  const replay::Grouping by = groupingArg(args.by);
  if (*args.to < *args.from) throw UsageError("--to is before --from");
  const auto period = integratePeriod(ledger, args, by);
  const auto coverage = replay::coverageOf(ledger, period.fromNs, period.toNs);
  const auto lastRecord = lastRecordTime(ledger);
  if (args.svg) {
    std::ofstream svg(*args.svg);
    if (!svg) throw UsageError("cannot write " + *args.svg);
    svg << render::renderUsageChart(period);
  }
  const auto keys = render::keyColumns(by);
  const auto lines = render::reportLines(period.rows);
  if (args.output == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["from"] = formatRfc3339(period.fromNs);
    j["to"] = formatRfc3339(period.toNs);
    j["by"] = by.text();
    render::putLastRecord(j, lastRecord, period.toNs);
    j["coverage"] = render::coverageToJson(coverage);
    j["rows"] = nlohmann::ordered_json::array();
    for (const auto& line : lines) j["rows"].push_back(render::reportRowJson(keys, line));
    j["totals"] = render::totalsJson(period.totals);
    out << j.dump(2) << "\n";
  } else if (args.output == OutputFormat::kCsv) {
    std::cerr << render::afterLastRecordNote(lastRecord, period.toNs)
              << render::coverageWarnings(coverage, period.fromNs);
    out << render::reportCsv(keys, lines, period.totals);
  } else {
    out << "Usage from " << formatRfc3339(period.fromNs) << " to " << formatRfc3339(period.toNs)
        << " by " << by.text() << "\n";
    out << render::afterLastRecordNote(lastRecord, period.toNs);
    out << render::coverageWarnings(coverage, period.fromNs);
    out << render::reportTable(keys, lines, period.totals);
  }
  return kExitOk;
}

}  // namespace ledger::cli
