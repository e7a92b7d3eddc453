#include "query_commands.h"

#include "progress.h"
#include "replayer.h"
#include "report_format.h"

namespace ledger::cli {

namespace {

// The seq a query is about: --seq, else --at, else the end of the log.
std::uint64_t resolveSeq(const Ledger& ledger, const QueryArgs& args, bool required) {
  if (args.seq && args.at) throw UsageError("give --at or --seq, not both");
  if (args.seq) return std::min(*args.seq, ledger.lastSeq());
  if (args.at) return replay::Replayer(ledger).seqAt(*args.at);
  if (required) throw UsageError("give the moment with --at TIME or --seq N");
  return ledger.lastSeq();
}

replay::ClusterState stateAt(const Ledger& ledger, std::uint64_t seq, const QueryArgs& args) {
  ProgressBar progress("query");
  replay::FoldOptions fo;
  fo.useCheckpoints = args.useCheckpoints;
  fo.progress = progress.callback();
  fo.onBadCheckpoint = warnBadCheckpoint;
  return replay::Replayer(ledger).foldTo(seq, fo);
}

int runState(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  const auto state = stateAt(ledger, resolveSeq(ledger, args, true), args);
  const auto report = replay::buildReport(state);
  if (args.output == OutputFormat::kJson) {
    out << replay::reportToJson(report).dump(2) << "\n";
  } else {
    out << replay::reportToTable(report);
  }
  return kExitOk;
}

int runUsage(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  const auto state = stateAt(ledger, resolveSeq(ledger, args, true), args);
  auto report = replay::buildReport(state);
  if (args.clusterQueue) {
    std::erase_if(report.clusterQueues,
                  [&](const replay::ClusterQueueReport& q) { return q.name != *args.clusterQueue; });
    if (report.clusterQueues.empty()) {
      throw UsageError("no ClusterQueue '" + *args.clusterQueue + "' at that moment");
    }
  }
  if (args.output == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["at"] = replay::atToJson(report.seq, report.timeNs);
    j["clusterQueues"] = nlohmann::ordered_json::array();
    for (const auto& q : report.clusterQueues) j["clusterQueues"].push_back(replay::clusterQueueToJson(q));
    out << j.dump(2) << "\n";
  } else {
    out << replay::clusterQueuesToTable(report.clusterQueues);
  }
  return kExitOk;
}

}  // namespace

int runQuery(const Ledger& ledger, const std::string& command, const QueryArgs& args,
             std::ostream& out) {
  if (command == "state") return runState(ledger, args, out);
  if (command == "usage") return runUsage(ledger, args, out);
  throw UsageError("unknown command '" + command + "'");
}

}  // namespace ledger::cli
