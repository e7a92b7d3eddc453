// ledger-query: point-in-time questions (docs/reference.md "ledger-query").
//   state --at TIME | --seq N        the state report as of that moment
//   usage --at TIME [--cluster-queue NAME]
//   usage --from T1 --to T2 --step 5m [--cluster-queue NAME]   a time series
//   waits --from T1 --to T2 [--by cluster-queue|namespace|local-queue]
//   why NS/NAME [--from T1] [--to T2]   why it waited, why it was evicted
//   serve [--fleet DIR] [--listen ADDR] [--token-file F] [--tls-cert F --tls-key F]
//         a read-only Kubernetes API at any moment, and the web view: runs
//         ledger-serve, installed beside this program
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <stdexcept>

#include "replay/fold/replayer.h"
#include "tools/archive/archive_command.h"
#include "tools/cli.h"
#include "tools/command_flags.h"
#include "tools/fleet_query.h"
#include "tools/progress.h"
#include "tools/query_commands.h"
#include "tools/sibling_program.h"

namespace po = boost::program_options;
using namespace ledger;

namespace {

// What each command reads (docs/reference.md "ledger-query"): anything else
// given to it is bad usage.
const cli::CommandFlags& queryFlags() {
  static const cli::CommandFlags flags{
      .everyCommand = {"ledger", "output", "log-format"},
      .positional = {"command", "target"},
      .perCommand = {
          {"state",
           {"at", "seq", "cluster-queue", "namespace", "findings-only", "wide", "fleet",
            "no-checkpoints", "ignore-failed-verify", "archive"}},
          {"usage",
           {"at", "seq", "cluster-queue", "from", "to", "step", "fleet", "no-checkpoints",
            "ignore-failed-verify", "archive"}},
          {"workload", {"from", "to", "fleet", "no-checkpoints", "ignore-failed-verify"}},
          {"why", {"from", "to", "no-checkpoints", "ignore-failed-verify"}},
          {"waits", {"from", "to", "by", "ignore-failed-verify"}},
          {"findings", {"from", "to", "step", "no-checkpoints", "ignore-failed-verify"}},
          {"report",
           {"from", "to", "cluster-queue", "by", "svg", "fleet", "no-checkpoints",
            "ignore-failed-verify"}},
          {"admit", {"at", "seq", "workload", "no-checkpoints", "ignore-failed-verify", "archive"}},
          {"serve",
           {"listen", "token-file", "tls-cert", "tls-key", "tls-client-ca",
            "max-connections-per-address", "fleet", "archive"}},
      }};
  return flags;
}

po::options_description queryOptions() {
  po::options_description opts(
      "ledger-query COMMAND [options]\n"
      "commands: state | usage | workload NS/NAME | why NS/NAME | report | waits | admit | serve\n"
      "options");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("version", "print the version")
    ("ledger", po::value<std::string>()->default_value(""), "ledger directory (default $LEDGER_DIR, else ./ledger-data)")
    ("output,o", po::value<std::string>()->default_value(""), "json or table (report, waits: also csv)")
    ("at", po::value<std::string>(), "the moment (TIME: RFC 3339, a date, -2h, now or end)")
    ("seq", po::value<std::uint64_t>(), "the moment as a seq")
    ("archive", po::value<std::string>(), "the archive of a cut ledger (ledger-replay archive): answers a moment before the cut")
    ("cluster-queue", po::value<std::string>(), "state/usage/report: only this ClusterQueue")
    ("namespace", po::value<std::string>(), "state: only this namespace's workloads, their queues, claims and findings")
    ("findings-only", "state: only the findings (with --cluster-queue/--namespace: theirs)")
    ("wide", "state -o table: list every pool counter (default: one short line per pool)")
    ("from", po::value<std::string>(), "workload/why/report/waits/findings/usage --step: period start (TIME: RFC 3339, a date, -7d, now or end)")
    ("to", po::value<std::string>(), "workload/why/report/waits/findings/usage --step: period end (TIME)")
    ("step", po::value<std::string>(), "usage: a series from --from to --to, one point per step (5m, 1h, 1d); findings: when findings opened and closed, per step")
    ("by", po::value<std::string>()->default_value("cluster-queue"), "report: cluster-queue, namespace, workload or flavor, or several joined by commas (cluster-queue,flavor); with --fleet also cluster; waits: cluster-queue, namespace or local-queue")
    ("svg", po::value<std::string>(), "report: also write a usage chart to this SVG file")
    ("workload", po::value<std::string>(), "admit: a Workload (or Job) manifest file, YAML or JSON")
    ("listen", po::value<std::string>()->default_value("127.0.0.1:9480"), "serve: HOST:PORT (beyond loopback only over TLS, with --token-file or client certificates)")
    ("token-file", po::value<std::string>(), "serve: require this bearer token")
    ("tls-cert", po::value<std::string>(), "serve: TLS certificate (PEM)")
    ("tls-key", po::value<std::string>(), "serve: TLS private key (PEM)")
    ("tls-client-ca", po::value<std::string>(), "serve: require client certificates signed by this CA")
    ("max-connections-per-address", po::value<std::string>(), "serve: connections one client address may hold at once (default 64; 0: no bound)")
    ("fleet", po::value<std::string>(), "state, usage, report, workload: ask every cluster's copy in this fleet directory (ledger-ingest --from-nats); serve: serve them all")
    ("no-checkpoints", "fold from the start, ignoring checkpoints and usage rollups")
    ("ignore-failed-verify", "answer even while the ledger's newest verification failed (with a warning)")
    ("log-format", po::value<std::string>()->default_value("text"), "text or json")
    ("command", po::value<std::string>()->default_value(""), "command")
    ("target", po::value<std::string>()->default_value(""), "NAMESPACE/NAME");
  // clang-format on
  return opts;
}

// `serve`: ledger-serve, beside this program (tools/sibling_program.h): the
// HTTP server's libraries are not loaded by every question.
[[noreturn]] void execServe(const po::variables_map& vm) {
  std::vector<std::string> serveArgs = {"--listen", vm["listen"].as<std::string>(), "--log-format",
                                        vm["log-format"].as<std::string>()};
  if (!vm["ledger"].as<std::string>().empty()) {
    serveArgs.insert(serveArgs.end(), {"--ledger", vm["ledger"].as<std::string>()});
  }
  for (const char* flag : {"token-file", "tls-cert", "tls-key", "tls-client-ca",
                           "max-connections-per-address", "fleet", "archive"}) {
    if (vm.count(flag)) {
      serveArgs.insert(serveArgs.end(), {std::string("--") + flag, vm[flag].as<std::string>()});
    }
  }
  cli::execSiblingProgram("ledger-serve", serveArgs);
}

}  // namespace

int main(int argc, char** argv) {
  const po::options_description opts = queryOptions();
  po::positional_options_description pos;
  pos.add("command", 1).add("target", 1);
  po::variables_map vm;
  if (auto exit = cli::parseCommandLine("ledger-query", argc, argv, opts, pos, &vm)) return *exit;
  return cli::runProgram("ledger-query", [&]() -> int {
    cli::setUpLogging(vm["log-format"].as<std::string>(), "info");
    const std::string command = vm["command"].as<std::string>();
    cli::rejectUnusedFlags(vm, command, queryFlags());
    const bool csv =
        command == "report" || command == "waits" || (command == "usage" && vm.count("step"));
    cli::QueryArgs args;
    args.output = cli::resolveOutput(vm["output"].as<std::string>(), csv);
    args.useCheckpoints = !vm.count("no-checkpoints");
    if (vm.count("ignore-failed-verify")) args.failedVerification = cli::FailedVerification::kWarn;
    args.target = vm["target"].as<std::string>();
    // The ledger is opened when a time flag says `end`, else after the
    // flags are read (a bad flag is reported before a missing ledger).
    std::unique_ptr<Ledger> ledger;
    auto openLedger = [&]() -> const Ledger& {
      if (!ledger)
        ledger = cli::openForReading(cli::resolveLedgerDir(vm["ledger"].as<std::string>()));
      return *ledger;
    };
    const cli::LedgerEnd end = vm.count("fleet")
                                   ? cli::fleetLastRecordEnd(vm["fleet"].as<std::string>())
                                   : cli::lastRecordEnd(openLedger);
    if (vm.count("at")) {
      args.at =
          cli::parseTimeArg(vm["at"].as<std::string>(), "--at", cli::TimeBeyondRange::kClamp, end);
    }
    if (vm.count("seq")) args.seq = vm["seq"].as<std::uint64_t>();
    if (vm.count("from")) {
      args.from = cli::parseTimeArg(vm["from"].as<std::string>(), "--from",
                                    cli::TimeBeyondRange::kReject, end);
    }
    if (vm.count("to")) {
      args.to =
          cli::parseTimeArg(vm["to"].as<std::string>(), "--to", cli::TimeBeyondRange::kReject, end);
    }
    if (vm.count("cluster-queue")) args.clusterQueue = vm["cluster-queue"].as<std::string>();
    if (vm.count("step")) {
      args.stepText = vm["step"].as<std::string>();
      args.stepNs = cli::parseStepArg(args.stepText, "--step");
    }
    if (vm.count("cluster-queue") && command == "state")
      args.filter.clusterQueue = vm["cluster-queue"].as<std::string>();
    if (vm.count("namespace")) args.filter.ns = vm["namespace"].as<std::string>();
    args.filter.findingsOnly = vm.count("findings-only") > 0;
    args.wide = vm.count("wide") > 0;
    if (vm.count("fleet") && !args.filter.empty())
      throw cli::UsageError(
          "--cluster-queue, --namespace and --findings-only on state go without --fleet");
    if (vm.count("svg")) args.svg = vm["svg"].as<std::string>();
    if (vm.count("workload")) args.workloadFile = vm["workload"].as<std::string>();
    args.by = vm["by"].as<std::string>();
    if (command.empty())
      throw cli::UsageError(
          "give a command: state, usage, workload, why, report, waits, admit or serve");
    if (command == "serve") execServe(vm);
    if (vm.count("fleet")) {
      return cli::runFleetQuery(vm["fleet"].as<std::string>(), command, args, std::cout);
    }
    // A moment before the cut is the archive's (it holds records 1..cut).
    if (const auto& cut = openLedger().archiveCut();
        cut && vm.count("archive") &&
        ((args.at && *args.at < cut->timeNs) || (args.seq && *args.seq < cut->seq))) {
      auto archive = cli::openArchiveOf(openLedger(), vm["archive"].as<std::string>());
      return cli::runQuery(*archive, command, args, std::cout);
    }
    return cli::runQuery(openLedger(), command, args, std::cout);
  });
}
