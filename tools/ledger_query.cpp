// ledger-query: point-in-time questions (CONTRACT.md "ledger-query").
//   state --at TIME | --seq N        the state report as of that moment
//   usage --at TIME [--cluster-queue NAME]
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <stdexcept>

#include "cli.h"
#include "progress.h"
#include "query_commands.h"
#include "replayer.h"

namespace po = boost::program_options;
using namespace ledger;

int main(int argc, char** argv) {
  po::options_description opts(
      "ledger-query COMMAND [options]\n"
      "commands: state | usage | workload NS/NAME | report | admit\n"
      "options");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("version", "print the version")
    ("ledger", po::value<std::string>()->default_value(""), "ledger directory (default $LEDGER_DIR, else ./ledger-data)")
    ("output,o", po::value<std::string>()->default_value(""), "json or table (report: also csv)")
    ("at", po::value<std::string>(), "the moment (RFC 3339 or now)")
    ("seq", po::value<std::uint64_t>(), "the moment as a seq")
    ("cluster-queue", po::value<std::string>(), "usage/report: only this ClusterQueue")
    ("from", po::value<std::string>(), "workload/report: period start")
    ("to", po::value<std::string>(), "workload/report: period end")
    ("by", po::value<std::string>()->default_value("cluster-queue"), "report: cluster-queue, namespace or workload")
    ("svg", po::value<std::string>(), "report: also write a usage chart to this SVG file")
    ("workload", po::value<std::string>(), "admit: a Workload (or Job) manifest file, YAML or JSON")
    ("no-checkpoints", "fold from the start, ignoring checkpoints")
    ("log-format", po::value<std::string>()->default_value("text"), "text or json")
    ("command", po::value<std::string>()->default_value(""), "command")
    ("target", po::value<std::string>()->default_value(""), "NAMESPACE/NAME");
  // clang-format on
  po::positional_options_description pos;
  pos.add("command", 1).add("target", 1);
  po::variables_map vm;
  if (auto exit = cli::parseCommandLine("ledger-query", argc, argv, opts, pos, &vm)) return *exit;
  try {
    cli::setUpLogging(vm["log-format"].as<std::string>(), "info");
    const std::string command = vm["command"].as<std::string>();
    const bool csv = command == "report";
    cli::QueryArgs args;
    args.output = cli::resolveOutput(vm["output"].as<std::string>(), csv);
    args.useCheckpoints = !vm.count("no-checkpoints");
    args.target = vm["target"].as<std::string>();
    if (vm.count("at"))
      args.at = cli::parseTimeArg(vm["at"].as<std::string>(), "--at", cli::TimeBeyondRange::kClamp);
    if (vm.count("seq")) args.seq = vm["seq"].as<std::uint64_t>();
    if (vm.count("from")) args.from = cli::parseTimeArg(vm["from"].as<std::string>(), "--from");
    if (vm.count("to")) args.to = cli::parseTimeArg(vm["to"].as<std::string>(), "--to");
    if (vm.count("cluster-queue")) args.clusterQueue = vm["cluster-queue"].as<std::string>();
    if (vm.count("svg")) args.svg = vm["svg"].as<std::string>();
    if (vm.count("workload")) args.workloadFile = vm["workload"].as<std::string>();
    args.by = vm["by"].as<std::string>();
    if (command.empty())
      throw cli::UsageError("give a command: state, usage, workload, report or admit");
    auto ledger = cli::openForReading(cli::resolveLedgerDir(vm["ledger"].as<std::string>()));
    return cli::runQuery(*ledger, command, args, std::cout);
  } catch (const cli::UsageError& e) {
    std::cerr << "ledger-query: " << e.what() << "\n";
    return cli::kExitUsage;
  } catch (const cli::LedgerOpenError& e) {
    spdlog::error("{}", e.what());
    return e.code();
  } catch (const replay::ReplayError& e) {
    spdlog::error("{}", e.what());
    return cli::exitCodeFor(e.status());
  } catch (const kj::Exception& e) {
    spdlog::error("{}", replay::damagedObject(e).what());
    return cli::kExitCorrupt;
  } catch (const std::overflow_error& e) {
    // Quantities are exact to about 1.7e29 units (replay/quantity.h); a sum
    // past that is not computed rather than wrapped. The state report makes
    // it a QuantityOverflow finding (replay/audit.h); this is for answers
    // with no finding to attach it to.
    spdlog::error(
        "{}: a quantity the ledger holds is too large to compute with ({}); no answer "
        "was produced",
        "ledger-query", e.what());
    return cli::kExitInput;
  }
}
