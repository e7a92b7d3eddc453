#include "tools/query/findings_timeline.h"

#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "replay/fold/replayer.h"
#include "replay/kueue/report.h"
#include "schema/k8s/rfc3339.h"
#include "tools/progress.h"

namespace ledger::cli {

// Named, not anonymous: the unity build compiles the library as one unit.
namespace findings_timeline {

using Key = std::tuple<std::string, std::string, std::string>;  // type, object, message

std::set<Key> openFindings(const replay::ClusterState& state) {
  // The digest is a quarter of a report's work and names no finding.
  replay::ReportOptions options;
  options.digest = false;
  std::set<Key> open;
  for (auto& f : replay::buildReport(state, options).findings) {
    open.emplace(std::move(f.type), std::move(f.object), std::move(f.message));
  }
  return open;
}

nlohmann::ordered_json findingJson(const Key& key) {
  nlohmann::ordered_json j;
  j["type"] = std::get<0>(key);
  j["object"] = std::get<1>(key);
  j["message"] = std::get<2>(key);
  return j;
}

// `openSeq`: a seq after which the finding is open (the step's end for an
// opening, the step before's for a closing), for a link to that state.
void addEvent(nlohmann::ordered_json& events, std::int64_t timeNs, const char* change,
              std::uint64_t openSeq, const Key& key) {
  nlohmann::ordered_json j;
  j["time"] = formatRfc3339(timeNs);
  j["change"] = change;
  j["openSeq"] = openSeq;
  j["type"] = std::get<0>(key);
  j["object"] = std::get<1>(key);
  j["message"] = std::get<2>(key);
  events.push_back(std::move(j));
}

std::uint64_t stepCount(const QueryArgs& args) {
  if (!args.from || !args.to || !args.stepNs) {
    throw UsageError("findings needs --from TIME, --to TIME and --step DURATION");
  }
  if (*args.to <= *args.from) throw UsageError("--to must be after --from");
  const std::uint64_t span =
      static_cast<std::uint64_t>(*args.to) - static_cast<std::uint64_t>(*args.from);
  const auto step = static_cast<std::uint64_t>(*args.stepNs);
  const std::uint64_t steps = span / step + (span % step != 0 ? 1 : 0);
  if (steps > kMaxFindingSteps) {
    throw UsageError("--step " + args.stepText + " makes " + std::to_string(steps) +
                     " steps; at most " + std::to_string(kMaxFindingSteps) +
                     " (take a longer step)");
  }
  return steps;
}

// -o table: one line per event, the time a step's start.
void printTable(const nlohmann::ordered_json& events, std::size_t openAtFrom, std::ostream& out) {
  out << openAtFrom << " findings open at --from; " << events.size() << " opened or closed after\n";
  if (events.empty()) return;
  out << std::left << std::setw(22) << "STEP" << std::setw(8) << "CHANGE" << std::setw(26) << "TYPE"
      << "OBJECT\n";
  for (const auto& e : events) {
    out << std::setw(22) << e["time"].get<std::string>() << std::setw(8)
        << e["change"].get<std::string>() << std::setw(26) << e["type"].get<std::string>()
        << e["object"].get<std::string>() << "\n";
  }
}

}  // namespace findings_timeline

int runFindingsTimeline(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  using findings_timeline::addEvent;
  using findings_timeline::findingJson;
  using findings_timeline::Key;
  using findings_timeline::openFindings;
  const std::uint64_t steps = findings_timeline::stepCount(args);
  const replay::Replayer replayer(ledger);
  replay::FoldOptions fo;
  fo.useCheckpoints = args.useCheckpoints;
  fo.onBadCheckpoint = warnBadCheckpoint;
  replay::ClusterState state = replayer.foldTo(replayer.seqAt(*args.from), fo);
  std::set<Key> open = openFindings(state);
  nlohmann::ordered_json atFrom = nlohmann::ordered_json::array();
  for (const Key& key : open) atFrom.push_back(findingJson(key));
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  ProgressBar progress("findings");
  for (std::uint64_t i = 0; i < steps; ++i) {
    const std::int64_t start = *args.from + static_cast<std::int64_t>(i) * *args.stepNs;
    const std::int64_t end = i + 1 == steps ? *args.to : start + *args.stepNs;
    // The state at the step's end: its records up to end - 1 ns, as
    // usage's buckets [start, end) hold them.
    const std::uint64_t seq = replayer.seqAt(end - 1);
    progress.update(i + 1, steps);
    if (seq <= state.seq()) continue;
    const std::uint64_t before = state.seq();
    replayer.foldInto(state, seq, fo);
    std::set<Key> now = openFindings(state);
    for (const Key& key : now) {
      if (!open.count(key)) addEvent(events, start, "opened", seq, key);
    }
    for (const Key& key : open) {
      if (!now.count(key)) addEvent(events, start, "closed", before, key);
    }
    open = std::move(now);
  }
  progress.done();
  if (args.output == OutputFormat::kTable) {
    findings_timeline::printTable(events, atFrom.size(), out);
    return kExitOk;
  }
  nlohmann::ordered_json j;
  j["from"] = formatRfc3339(*args.from);
  j["to"] = formatRfc3339(*args.to);
  j["step"] = args.stepText;
  j["openAtFrom"] = std::move(atFrom);
  j["events"] = std::move(events);
  out << j.dump(2) << "\n";
  return kExitOk;
}

}  // namespace ledger::cli
