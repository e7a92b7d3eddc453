// ledger-replay: rebuild state from the log for audits.
//   ledger-replay [--until TIME | --until-seq N] [-o json|table]   the state report
//   ledger-replay verify [--kueue-config NS/NAME]                 check the log and all derived
//   data ledger-replay export [--from-seq N]                           the log as watch-event JSON
//   lines ledger-replay rebuild-projection                              re-derive the typed
//   projection ledger-replay checkpoint [--every N]                          write checkpoints
//   ledger-replay stats                                           sizes per column family
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>

#include "ingest/ingester.h"
#include "ingest/projector.h"
#include "ledger/archive.h"
#include "ledger/format.h"
#include "ledger/verification_record.h"
#include "ledger/verify.h"
#include "replay/fold/checkpoints.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/usage_rollups.h"
#include "schema/k8s/rfc3339.h"
#include "tools/archive/archive_command.h"
#include "tools/cli.h"
#include "tools/command_flags.h"
#include "tools/fleet_command.h"
#include "tools/fleet_query.h"
#include "tools/progress.h"
#include "tools/query_commands.h"
#include "tools/render/report_format.h"
#include "tools/report_filter.h"

namespace po = boost::program_options;
using namespace ledger;

namespace {

// What each command reads (docs/reference.md "ledger-replay"): anything else
// given to it is bad usage. publish reads the NATS options
// (tools/fleet_command.h), which check themselves.
const cli::CommandFlags& replayFlags() {
  static const cli::CommandFlags flags{
      .everyCommand = {"ledger", "output", "log-format"},
      .positional = {"command"},
      .perCommand = {
          {"",
           {"until", "until-seq", "no-checkpoints", "ignore-failed-verify", "cluster-queue",
            "namespace", "findings-only", "wide", "quiet", "archive"}},
          {"verify", {"kueue-config", "fleet", "trusted-keys", "quiet", "archive", "threads"}},
          {"archive", {"before", "to", "every", "kueue-config", "quiet"}},
          {"stats", {}},
          {"export", {"from-seq"}},
          {"rebuild-projection", {"kueue-config", "quiet"}},
          {"checkpoint", {"every", "rewrite", "quiet"}},
          {"compact", {"family"}},
          {"keygen", {"out"}},
      }};
  return flags;
}

// Whether --until or --until-seq names a moment before the ledger's cut,
// which its archive answers.
bool beforeCut(const Ledger& ledger, const po::variables_map& vm) {
  const auto& cut = ledger.archiveCut();
  if (!cut) return false;
  if (vm.count("until-seq")) return vm["until-seq"].as<std::uint64_t>() < cut->seq;
  if (!vm.count("until")) return false;
  return cli::parseTimeArg(vm["until"].as<std::string>(), "--until", cli::TimeBeyondRange::kClamp,
                           cli::lastRecordEnd([&]() -> const Ledger& { return ledger; })) <
         cut->timeNs;
}

int runReport(const Ledger& ledger, const po::variables_map& vm, cli::OutputFormat output) {
  cli::warnIfOlderProjections(ledger);
  replay::Replayer replayer(ledger);
  std::uint64_t seq = ledger.lastSeq();
  if (vm.count("until-seq"))
    seq = std::min<std::uint64_t>(vm["until-seq"].as<std::uint64_t>(), seq);
  if (vm.count("until")) {
    const std::int64_t until =
        cli::parseTimeArg(vm["until"].as<std::string>(), "--until", cli::TimeBeyondRange::kClamp,
                          cli::lastRecordEnd([&]() -> const Ledger& { return ledger; }));
    seq = std::min(seq, replayer.seqAt(until));
  }
  cli::ReportFilter filter;
  if (vm.count("cluster-queue")) filter.clusterQueue = vm["cluster-queue"].as<std::string>();
  if (vm.count("namespace")) filter.ns = vm["namespace"].as<std::string>();
  filter.findingsOnly = vm.count("findings-only") > 0;
  cli::ProgressBar progress("replay", vm.count("quiet") > 0);
  replay::FoldOptions fo;
  fo.useCheckpoints = !vm.count("no-checkpoints");
  fo.progress = progress.callback();
  fo.onBadCheckpoint = cli::warnBadCheckpoint;
  const auto policy = vm.count("ignore-failed-verify") ? cli::FailedVerification::kWarn
                                                       : cli::FailedVerification::kRefuse;
  return cli::answerWithProof(ledger, output, policy, std::cout, [&](std::ostream& out) {
    replay::ClusterState state = replayer.foldTo(seq, fo);
    progress.done();
    replay::StateReport report = replay::buildReport(state);
    cli::filterReport(report, filter);
    if (output == cli::OutputFormat::kJson) {
      out << render::reportJsonText(report) << "\n";
    } else {
      out << render::reportToTable(
          report, {.wide = vm.count("wide") > 0, .findingsOnly = filter.findingsOnly});
    }
    return cli::kExitOk;
  });
}

// The ProjectionOptions of --kueue-config, checked (a usage error otherwise).
ingest::ProjectionOptions projectionOptions(const po::variables_map& vm) {
  ingest::ProjectionOptions projection;
  projection.kueueConfigMap = vm["kueue-config"].as<std::string>();
  try {
    ingest::checkKueueConfigMap(projection.kueueConfigMap);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
  return projection;
}

// Beside the ledger, where every answer reads its proof line
// (ledger/verification_record.h). A ledger this user may only read keeps
// its record: the check's own answer stands, with a warning.
void recordResult(const Ledger& ledger, const VerifyReport& log, const std::string& failure,
                  std::uint64_t failedSeq) {
  Verification v;
  v.scope = VerificationScope::kFull;
  v.timeNs = nowNs();
  v.upToSeq = log.lastSeq;
  v.ok = failure.empty();
  v.failedSeq = failedSeq;
  v.problem = failure;
  if (Status st = recordVerification(ledger.directory(), v); !st.isOk()) {
    spdlog::warn("the result was not recorded beside the ledger, so answers do not state it: {}",
                 st.toString());
  }
}

// An archive (ledger/archive.h) must end where its seal says: records
// appended after the seal, or lost, are not the archive that was sealed.
// Empty for a sound archive and for a ledger that is none.
std::string archiveSealProblem(const Ledger& ledger) {
  std::optional<ArchiveSeal> seal;
  Status st = readArchiveSeal(ledger.directory(), &seal);
  if (st.isOk() && seal) st = checkArchiveSeal(ledger, *seal);
  return st.isOk() ? std::string() : st.message();
}

// What `verify` found: the log's checks, then the archive's seal, the
// checkpoints and the rollups, the first failing one named.
struct VerifyOutcome {
  VerifyReport log;
  std::string seal;  // the seal's problem, empty when sound or none
  replay::CheckpointVerification cps;
  replay::RollupVerification rollups;
  // The entries a cut kept of its archived records were checked against the
  // archive (verify --archive).
  bool againstArchive = false;

  bool ok() const {
    return log.ok() && seal.empty() && cps.firstBadSeq == 0 && rollups.firstBad.empty();
  }
  // Where verification failed: a seq, or a derived family's key.
  std::string where() const {
    if (!log.ok()) {
      return log.firstBadSeq != 0 ? "seq " + std::to_string(log.firstBadSeq)
                                  : log.badFamily + " key " + log.badKey;
    }
    if (!seal.empty()) return std::string("the archive's seal (") + kArchiveSealFile + ")";
    if (cps.firstBadSeq != 0) return "seq " + std::to_string(cps.firstBadSeq);
    if (rollups.firstBad.empty()) return {};
    // A bucket ("hour 2026-...") or the held levels stored beside them
    // ("held changes after seq N"), or the wait data ("wait samples of
    // hour T", "wait state after seq N").
    return rollups.firstBad.starts_with("held ") || rollups.firstBad.starts_with("wait ")
               ? "the stored " + rollups.firstBad
               : "the usage rollup of the " + rollups.firstBad;
  }
  const std::string& problem() const {
    return !log.ok()              ? log.problem
           : !seal.empty()        ? seal
           : cps.firstBadSeq != 0 ? cps.problem
                                  : rollups.problem;
  }
};

void printVerifyJson(const VerifyOutcome& v, const std::string& dense, std::ostream& out) {
  nlohmann::ordered_json j;
  j["ok"] = v.ok();
  j["recordsChecked"] = v.log.recordsChecked;
  j["lastSeq"] = v.log.lastSeq;
  j["lastHash"] = v.log.lastHashHex;
  j["checks"] = {dense,
                 "SHA-256 hash chain",
                 "records decode",
                 "times never go backwards",
                 "projection decodes in full and is what the record's JSON projects to",
                 "time index holds exactly one entry per record",
                 "every dedupe key names the record that forms it (in today's format or an "
                 "earlier build's), and every record's key is there",
                 "live view is what the log's last record of each object says",
                 "object index holds exactly the entries the records form (when it covers "
                 "every record)",
                 "head matches last record",
                 "an archive ends where its seal says",
                 "checkpoints equal a fresh replay, their copies the projection records",
                 "usage rollups equal a fresh integration of the log, and none is stored "
                 "outside the hours they cover",
                 "stored wait hours and states equal a fresh pass over the log"};
  if (v.againstArchive) {
    j["checks"].push_back(
        "the dedupe keys, live entries and object index referrer keys kept of the archived "
        "records are the archive's, and none of the archive's is missing");
  }
  j["checkpointsChecked"] = v.cps.checked;
  j["usageRollupsChecked"] = v.rollups.checked;
  if (!v.log.ok()) {
    if (v.log.firstBadSeq != 0) {
      j["firstBadSeq"] = v.log.firstBadSeq;
    } else {
      j["family"] = v.log.badFamily;
      j["key"] = v.log.badKey;
    }
  } else if (!v.seal.empty()) {
    j["file"] = kArchiveSealFile;
  } else if (v.cps.firstBadSeq != 0) {
    j["firstBadSeq"] = v.cps.firstBadSeq;
  } else if (!v.rollups.firstBad.empty()) {
    j["family"] = format::kUsageRollupsFamily;
    j["bucket"] = v.rollups.firstBad;
  }
  if (!v.ok()) j["problem"] = v.problem();
  out << j.dump(2) << "\n";
}

void printVerifyText(const VerifyOutcome& v, const std::string& dense, std::ostream& out) {
  out << "checked " << v.log.recordsChecked << " records: " << dense
      << ", SHA-256 hash chain, decoding, monotonic times, "
         "projection (derived again), time index, dedupe keys, live view, head"
      << (v.againstArchive ? ", what the cut kept of the archived records (against the archive)"
                           : "")
      << "\n";
  if (v.log.ok()) {
    out << "checked " << v.cps.checked << " checkpoints against a fresh replay\n";
    if (v.cps.firstBadSeq == 0) {
      out << "checked " << v.rollups.checked << " usage rollups against a fresh integration\n";
    }
  }
  if (!v.ok()) {
    out << "FAILED at " << v.where() << ": " << v.problem() << "\n";
  } else {
    out << "OK: ledger is sound up to seq " << v.log.lastSeq << " (head " << v.log.lastHashHex
        << ")\n";
  }
}

// How `verify` runs: the flags of the command line.
struct VerifyRun {
  ingest::ProjectionOptions projection;
  cli::OutputFormat output = cli::OutputFormat::kTable;
  bool quiet = false;
  unsigned threads = 0;  // --threads: 0, every core
};

// The checks of `verify`, as VerifyOutcome orders them; Status for a ledger
// that cannot be read at all. The checkpoints' fresh fold and the rollups'
// fresh integration each read the log alone, beside the log's scan, so that
// every core works; their answers count only once the log is sound. With
// one thread, each runs after the log, and only once it is sound.
Status verifyAll(const Ledger& ledger, const Ledger* archive, const VerifyRun& run,
                 VerifyOutcome* v) {
  const auto policy = run.threads == 1 ? std::launch::deferred : std::launch::async;
  auto cpsRun = std::async(policy, [&] { return replay::verifyCheckpoints(ledger, run.threads); });
  auto rollupsRun = std::async(policy, [&] { return replay::verifyUsageRollups(ledger); });
  // The projection and the dedupe keys are derived again the way ingest
  // derived them: reports are computed from the projection, and ingest
  // trusts the dedupe keys, and the chain covers neither.
  VerifyOptions vo;
  vo.project = [&](const Record& r) {
    return ingest::projectJsonText(r.objectJson, run.projection);
  };
  vo.dedupeKey = ingest::dedupeKeyOf;
  vo.legacyDedupeKeys = ingest::legacyDedupeKeysOf;
  vo.archive = archive;
  vo.scanRanges = run.threads;
  cli::ProgressBar progress("verify", run.quiet);
  vo.progress = progress.callback();
  const Status scanned = verifyLog(ledger, &v->log, vo);
  progress.done();
  if (scanned.isOk() && v->log.ok()) v->seal = archiveSealProblem(ledger);
  if (scanned.isOk() && v->log.ok() && v->seal.empty()) {
    v->cps = cpsRun.get();
    if (v->cps.firstBadSeq == 0) v->rollups = rollupsRun.get();
    return Status::ok();
  }
  // Over an unsound log they may fail in any way; what they found is moot.
  if (run.threads == 1) return scanned;
  try {
    cpsRun.get();
  } catch (...) {
  }
  try {
    rollupsRun.get();
  } catch (...) {
  }
  return scanned;
}

// `archive`: the cut ledger's archive, against which the entries the cut
// kept of the archived records are checked (VerifyOptions::archive).
int runVerify(const Ledger& ledger, const Ledger* archive, const VerifyRun& run,
              std::ostream& out) {
  VerifyOutcome v;
  v.againstArchive = archive != nullptr && ledger.archiveCut();
  if (Status st = verifyAll(ledger, archive, run, &v); !st.isOk()) {
    spdlog::error("{}", st.toString());
    return cli::exitCodeFor(st);
  }
  const std::string dense = ledger.archiveCut() ? "dense sequence from the link to the archive " +
                                                      ledger.archiveCut()->archiveDir
                                                : std::string("dense sequence from 1");
  if (run.output == cli::OutputFormat::kJson) {
    printVerifyJson(v, dense, out);
  } else {
    printVerifyText(v, dense, out);
  }
  if (!v.ok()) spdlog::error("verification failed at {}: {}", v.where(), v.problem());
  // The seq is a field of its own; a family's key or a rollup's hour is not.
  const std::uint64_t failedSeq = !v.log.ok() ? v.log.firstBadSeq : v.cps.firstBadSeq;
  recordResult(ledger, v.log,
               v.ok()           ? std::string()
               : failedSeq != 0 ? v.problem()
                                : v.where() + ": " + v.problem(),
               failedSeq);
  return v.ok() ? cli::kExitOk : cli::kExitCorrupt;
}

// `verify`, of the ledger alone or (--archive) with its archive as one chain.
int runVerifyCommand(const std::string& dir, const po::variables_map& vm, const VerifyRun& run) {
  if (vm.count("archive")) {
    return cli::runVerifyWithArchive(
        *cli::openForReading(dir), vm["archive"].as<std::string>(),
        run.output == cli::OutputFormat::kJson,
        [&](const Ledger& l, const Ledger* archive, std::ostream& out) {
          return runVerify(l, archive, run, out);
        },
        std::cout);
  }
  return runVerify(*cli::openForReading(dir), nullptr, run, std::cout);
}

VerifyRun verifyRunOf(const po::variables_map& vm, cli::OutputFormat output) {
  VerifyRun run{projectionOptions(vm), output, vm.count("quiet") > 0, 0};
  if (vm.count("threads")) {
    const int threads = vm["threads"].as<int>();
    if (threads < 1) throw cli::UsageError("--threads must be at least 1");
    run.threads = static_cast<unsigned>(threads);
  }
  return run;
}

int runArchiveCommand(const std::string& dir, const po::variables_map& vm) {
  if (!vm.count("before") || !vm.count("to"))
    throw cli::UsageError("archive needs --before TIME and --to DIR");
  cli::ArchiveRequest request{vm["before"].as<std::string>(), vm["to"].as<std::string>(),
                              projectionOptions(vm), vm["every"].as<std::uint64_t>(),
                              vm.count("quiet") > 0};
  return cli::runArchive(*cli::openForWriting(dir), request);
}

int runExport(const Ledger& ledger, std::uint64_t from) {
  Status st = ledger.scanRecords(from == 0 ? 1 : from, 0, [&](const Record& r, const Digest&) {
    nlohmann::ordered_json j;
    j["type"] = eventTypeName(r.type);
    j["object"] = nlohmann::ordered_json::parse(r.objectJson);
    j["time"] = formatRfc3339(r.timeNs);
    std::cout << j.dump() << "\n";
    return true;
  });
  if (!st.isOk()) {
    spdlog::error("{}", st.toString());
    return cli::exitCodeFor(st);
  }
  return cli::kExitOk;
}

// Sizes of what the ledger holds (uncompressed value bytes per column family,
// and the directory on disk): how much checkpoints cost beside the log.
int runStats(const Ledger& ledger, cli::OutputFormat output) {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> families;  // count, bytes
  for (const char* f : {"log", "projection", "checkpoints", "checkpoint_objects", "time_index",
                        "events", "live", "object_index", "usage_rollups"}) {
    auto& totals = families[f];  // a pair, not bindings: lambdas may not capture those (clang)
    Status st = ledger.scanRaw(f, [&](std::string_view k, std::string_view v) {
      ++totals.first;
      totals.second += k.size() + v.size();
    });
    if (!st.isOk()) {
      spdlog::error("{}", st.toString());
      return cli::exitCodeFor(st);
    }
  }
  std::uint64_t onDisk = 0;
  for (const auto& e : std::filesystem::directory_iterator(ledger.directory())) {
    if (e.is_regular_file()) onDisk += e.file_size();
  }
  nlohmann::ordered_json j;
  j["records"] = ledger.lastSeq();
  j["bytesOnDisk"] = onDisk;
  for (const auto& [f, cb] : families)
    j["families"][f] = {{"entries", cb.first}, {"valueBytes", cb.second}};
  const double log = static_cast<double>(families["log"].second);
  // Checkpoints with the copies they hold.
  const double checkpoints =
      static_cast<double>(families["checkpoints"].second + families["checkpoint_objects"].second);
  j["checkpointBytesPerLogByte"] = log > 0 ? checkpoints / log : 0.0;
  if (output == cli::OutputFormat::kJson) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "records " << ledger.lastSeq() << ", " << onDisk << " bytes on disk\n";
    for (const auto& [f, cb] : families) {
      std::cout << "  " << f << ": " << cb.first << " entries, " << cb.second
                << " bytes uncompressed\n";
    }
    std::cout << "checkpoints cost " << j["checkpointBytesPerLogByte"].get<double>() * 100
              << "% of the log's bytes\n";
  }
  return cli::kExitOk;
}

// Rewrites the table files with this build's storage options; the content
// (and every answer) stays the same.
int runCompact(Ledger& ledger, const std::string& family) {
  if (Status st = ledger.compact(family); !st.isOk()) {
    if (st.code() == Status::Code::kInvalidArgument) throw cli::UsageError(st.message());
    spdlog::error("{}", st.toString());
    return cli::exitCodeFor(st);
  }
  std::cout << "compacted " << (family.empty() ? "every column family" : family) << "\n";
  return cli::kExitOk;
}

// The usage rollups after a rebuild or checkpoint, with their own bar (a
// fold of the whole log).
std::uint64_t writeRollups(Ledger& ledger, bool quiet) {
  cli::ProgressBar progress("usage rollups", quiet);
  replay::FoldOptions fo;
  fo.progress = progress.callback();
  const std::uint64_t written = replay::writeUsageRollups(ledger, fo);
  progress.done();
  return written;
}

int runCheckpoint(Ledger& ledger, const po::variables_map& vm, bool quiet) {
  cli::warnIfOlderProjections(ledger);  // checkpoints are folds of the projection
  if (vm.count("rewrite")) {
    for (Status st : {ledger.dropCheckpoints(), ledger.dropUsageRollups()}) {
      if (!st.isOk()) {
        spdlog::error("{}", st.toString());
        return cli::exitCodeFor(st);
      }
    }
  }
  const std::uint64_t every = vm["every"].as<std::uint64_t>();
  cli::ProgressBar progress("checkpoint", quiet);
  const auto written = replay::writeCheckpoints(ledger, every, progress.callback());
  progress.done();
  std::cout << "wrote " << written << " checkpoints (every " << every << " records)\n";
  std::cout << "wrote " << writeRollups(ledger, quiet) << " usage rollups (hours, days, months)\n";
  return cli::kExitOk;
}

int runRebuildProjection(Ledger& ledger, const ingest::ProjectionOptions& projection, bool quiet) {
  std::uint64_t rewritten = 0;
  const std::uint64_t last = ledger.lastSeq();
  cli::ProgressBar progress("rebuild-projection", quiet);
  Status st = ledger.rebuildProjection(
      [&](const Record& r) {
        progress.update(r.seq, last);
        return ingest::projectJsonText(r.objectJson, projection);
      },
      &rewritten);
  progress.done();
  if (!st.isOk()) {
    spdlog::error("{}", st.toString());
    return cli::exitCodeFor(st);
  }
  std::cout << "rebuilt the projection of " << rewritten << " records\n";
  // The rebuild dropped the usage rollups, integrals of the projection.
  std::cout << "wrote " << writeRollups(ledger, quiet) << " usage rollups (hours, days, months)\n";
  return cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description opts(
      "ledger-replay [COMMAND] [options]\n"
      "commands: (none) the state report | verify | export | rebuild-projection | checkpoint | "
      "stats | compact | publish | keygen | archive\n"
      "options");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("version", "print the version")
    ("ledger", po::value<std::string>()->default_value(""), "ledger directory (default $LEDGER_DIR, else ./ledger-data)")
    ("output,o", po::value<std::string>()->default_value(""), "json or table (default: table on a terminal)")
    ("until", po::value<std::string>(), "report the state as of this time (RFC 3339 or now)")
    ("until-seq", po::value<std::uint64_t>(), "report the state after this seq")
    ("archive", po::value<std::string>(), "verify: the archive of a cut ledger, checked with it as one chain; the state report: answers a moment before the cut")
    ("before", po::value<std::string>(), "archive: move the records before this TIME to the archive (--to DIR)")
    ("from-seq", po::value<std::uint64_t>()->default_value(1), "export: first seq")
    ("every", po::value<std::uint64_t>()->default_value(replay::kDefaultCheckpointInterval), "checkpoint: records between checkpoints")
    ("no-checkpoints", "fold from the start, ignoring checkpoints")
    ("ignore-failed-verify", "the state report: answer even while the ledger's newest verification failed (with a warning)")
    ("cluster-queue", po::value<std::string>(), "the state report: only this ClusterQueue, its workloads, claims and findings")
    ("namespace", po::value<std::string>(), "the state report: only this namespace's workloads, their queues, claims and findings")
    ("findings-only", "the state report: only the findings (with --cluster-queue/--namespace: theirs)")
    ("wide", "the state report -o table: list every pool counter (default: one short line per pool)")
    ("quiet", "the state report, verify, rebuild-projection, checkpoint, archive: no progress bar on a terminal")
    ("threads", po::value<int>(), "verify: the threads it checks on (default: one per core; 1 checks one thing after another)")
    ("rewrite", "checkpoint: drop existing checkpoints first")
    ("kueue-config", po::value<std::string>()->default_value(ingest::ProjectionOptions().kueueConfigMap), "rebuild-projection, verify: the ConfigMap, NAMESPACE/NAME, Kueue reads its configuration from (as given to ledger-ingest)")
    ("family", po::value<std::string>()->default_value(""), "compact: only this column family (e.g. projection)")
    ("log-format", po::value<std::string>()->default_value("text"), "text or json")
    ("command", po::value<std::string>()->default_value(""), "command");
  // clang-format on
  opts.add(cli::replayFleetOptions());
  po::positional_options_description pos;
  pos.add("command", 1);
  po::variables_map vm;
  if (auto exit = cli::parseCommandLine("ledger-replay", argc, argv, opts, pos, &vm)) return *exit;
  return cli::runProgram("ledger-replay", [&]() -> int {
    cli::setUpLogging(vm["log-format"].as<std::string>(), "info");
    const cli::OutputFormat output = cli::resolveOutput(vm["output"].as<std::string>());
    const std::string command = vm["command"].as<std::string>();
    cli::rejectUnusedFlags(vm, command, replayFlags());
    const bool quiet = vm.count("quiet") > 0;
    const std::string dir = cli::resolveLedgerDir(vm["ledger"].as<std::string>());
    if (command.empty()) {
      if (vm.count("until") && vm.count("until-seq"))
        throw cli::UsageError("give --until or --until-seq, not both");
      auto ledger = cli::openForReading(dir);
      if (vm.count("archive") && beforeCut(*ledger, vm)) {
        return runReport(*cli::openArchiveOf(*ledger, vm["archive"].as<std::string>()), vm, output);
      }
      return runReport(*ledger, vm, output);
    }
    if (vm.count("fleet")) {
      if (command != "verify") throw cli::UsageError("--fleet goes with verify");
      const VerifyRun run = verifyRunOf(vm, output);
      std::optional<std::string> keys;
      if (vm.count("trusted-keys")) keys = vm["trusted-keys"].as<std::string>();
      return cli::runFleetVerify(vm["fleet"].as<std::string>(), keys,
                                 output == cli::OutputFormat::kJson, std::cout,
                                 [&](const Ledger& copy, std::ostream& out) {
                                   return runVerify(copy, nullptr, run, out);
                                 });
    }
    if (command == "verify") return runVerifyCommand(dir, vm, verifyRunOf(vm, output));
    if (command == "publish") return cli::runPublish(vm, dir);
    if (command == "archive") return runArchiveCommand(dir, vm);
    if (command == "keygen") return cli::runKeygen(vm);
    if (command == "stats") return runStats(*cli::openForReading(dir), output);
    if (command == "export") {
      // By default from the ledger's first record: 1, or the seq after its cut.
      auto ledger = cli::openForReading(dir);
      return runExport(*ledger, vm["from-seq"].defaulted() ? ledger->firstSeq()
                                                           : vm["from-seq"].as<std::uint64_t>());
    }
    if (command == "rebuild-projection" || command == "checkpoint" || command == "compact") {
      std::unique_ptr<Ledger> ledger = cli::openForWriting(dir);
      if (command == "compact") return runCompact(*ledger, vm["family"].as<std::string>());
      if (command == "checkpoint") return runCheckpoint(*ledger, vm, quiet);
      return runRebuildProjection(*ledger, projectionOptions(vm), quiet);
    }
    throw cli::UsageError("unknown command '" + command + "'");
  });
}
