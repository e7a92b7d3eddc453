#include "tools/query/waits_command.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "replay/kueue/wait_rollups.h"
#include "replay/kueue/workload_waits.h"
#include "schema/k8s/rfc3339.h"
#include "tools/progress.h"
#include "tools/render/coverage_format.h"
#include "tools/render/report_format.h"

namespace ledger::cli {

namespace {

// Nanoseconds as seconds, exact: trailing zeros of the fraction dropped.
std::string secondsText(std::int64_t ns) {
  std::string text = std::to_string(ns / 1'000'000'000);
  std::string fraction = std::to_string(1'000'000'000 + ns % 1'000'000'000).substr(1);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return fraction.empty() ? text : text + "." + fraction;
}

const char* keyName(replay::WaitGrouping by) {
  switch (by) {
    case replay::WaitGrouping::kNamespace:
      return "namespace";
    case replay::WaitGrouping::kLocalQueue:
      return "localQueue";
    case replay::WaitGrouping::kClusterQueue:
      break;
  }
  return "clusterQueue";
}

// One group's columns after its key: admissions, p50, p95, max (empty
// without admissions), still pending.
std::vector<std::string> statColumns(const replay::WaitGroup& g) {
  auto at = [&](int percent) {
    const auto v = replay::nearestRank(g.waitsNs, percent);
    return v ? secondsText(*v) : std::string();
  };
  return {std::to_string(g.waitsNs.size()), at(50), at(95), at(100),
          std::to_string(g.stillPending)};
}

nlohmann::ordered_json groupJson(const replay::WaitsReport& report, const replay::WaitGroup& g) {
  nlohmann::ordered_json j;
  j[keyName(report.by)] = g.key;
  j["admissions"] = g.waitsNs.size();
  for (const auto& [name, percent] :
       {std::pair{"p50WaitSeconds", 50}, {"p95WaitSeconds", 95}, {"maxWaitSeconds", 100}}) {
    const auto v = replay::nearestRank(g.waitsNs, percent);
    // A JSON number written from the exact decimal text.
    j[name] = v ? nlohmann::ordered_json::parse(secondsText(*v)) : nlohmann::ordered_json();
  }
  j["stillPending"] = g.stillPending;
  return j;
}

}  // namespace

int runWaits(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  if (!args.from || !args.to) throw UsageError("waits needs --from TIME and --to TIME");
  if (*args.to <= *args.from) throw UsageError("--to must be after --from");
  replay::WaitGrouping by;
  try {
    by = replay::parseWaitGrouping(args.by);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--by '" + args.by + "': " + e.what());
  }
  ProgressBar progress("waits");
  std::string storedProblem;
  const auto report = replay::waitsFromRollups(ledger, *args.from, *args.to, by, nullptr,
                                               &storedProblem, progress.callback());
  progress.done();
  // Derived data read around: the answer is the log's, verify names the value.
  if (!storedProblem.empty()) std::cerr << "note: " << storedProblem << "; answered from the log\n";
  const auto lastRecord = lastRecordTime(ledger);
  if (args.output == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["from"] = formatRfc3339(report.fromNs);
    j["to"] = formatRfc3339(report.toNs);
    j["by"] = replay::waitGroupingText(by);
    render::putLastRecord(j, lastRecord, report.toNs);
    j["groups"] = nlohmann::ordered_json::array();
    for (const auto& g : report.groups) j["groups"].push_back(groupJson(report, g));
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : report.groups) {
    rows.push_back({g.key});
    for (auto& c : statColumns(g)) rows.back().push_back(std::move(c));
  }
  if (args.output == OutputFormat::kCsv) {
    std::cerr << render::afterLastRecordNote(lastRecord, report.toNs);
    out << replay::waitGroupingText(by)
        << ",admissions,p50_wait_seconds,p95_wait_seconds,max_wait_seconds,still_pending\n";
    for (const auto& row : rows) {
      for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << row[c];
      out << "\n";
    }
    return kExitOk;
  }
  for (auto& row : rows) {
    for (auto& c : row) {
      // push_back, not `c = "-"`: GCC 12 at -O2 without unity builds warns
      // falsely on that assignment here (-Wrestrict, GCC bug 105329).
      if (c.empty()) c.push_back('-');
    }
  }
  out << "Waits from " << formatRfc3339(report.fromNs) << " to " << formatRfc3339(report.toNs)
      << " by " << replay::waitGroupingText(by) << "\n"
      << render::afterLastRecordNote(lastRecord, report.toNs)
      << render::renderTable(
             {by == replay::WaitGrouping::kNamespace    ? "NAMESPACE"
              : by == replay::WaitGrouping::kLocalQueue ? "LOCALQUEUE"
                                                        : "CLUSTERQUEUE",
              "ADMISSIONS", "P50 WAIT (S)", "P95 WAIT (S)", "MAX WAIT (S)", "STILL PENDING"},
             rows);
  return kExitOk;
}

}  // namespace ledger::cli
