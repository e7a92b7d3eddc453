// ledger-gen: prints a simulated Kueue cluster's watch-event stream (JSON
// lines with times), deterministic for a seed: the benchmark's input, and a
// realistic stream for trying the ledger out.
//
//   ledger-gen --events N --seed S [--nodes N --queues M] [--quiet] > out.jsonl
//
// A progress bar on stderr while stderr is a terminal (tools/progress.h):
// millions of events take minutes.
#include <boost/program_options.hpp>
#include <iostream>

#include "tools/cli.h"
#include "tools/generator/cluster_sim.h"
#include "tools/progress.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  po::options_description opts("ledger-gen: a simulated Kueue cluster's watch events on stdout");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("version", "print the version")
    ("events", po::value<std::uint64_t>()->default_value(100000), "watch events to print")
    ("seed", po::value<std::uint64_t>()->default_value(1), "simulation seed (same seed, same bytes)")
    ("nodes", po::value<int>()->default_value(64), "GPU nodes (8 A100s each, MIG-partitionable)")
    ("queues", po::value<int>()->default_value(16), "ClusterQueues (4 per cohort), one namespace each")
    ("cohort-size", po::value<int>()->default_value(4), "ClusterQueues per cohort")
    ("quiet", "no progress bar on a terminal");
  // clang-format on
  po::variables_map vm;
  if (auto exit = ledger::cli::parseCommandLine("ledger-gen", argc, argv, opts, {}, &vm)) {
    return *exit;
  }
  return ledger::cli::runProgram("ledger-gen", [&]() -> int {
    ledger::gen::SimOptions so;
    so.events = vm["events"].as<std::uint64_t>();
    so.seed = vm["seed"].as<std::uint64_t>();
    so.nodes = vm["nodes"].as<int>();
    so.queues = vm["queues"].as<int>();
    so.cohortSize = vm["cohort-size"].as<int>();
    std::ios::sync_with_stdio(false);
    try {
      ledger::gen::ClusterSim sim(so);
      ledger::cli::ProgressBar progress("ledger-gen", vm.count("quiet") > 0);
      std::string line;
      std::uint64_t written = 0;
      while (sim.next(&line)) {
        line.push_back('\n');
        std::cout.write(line.data(), static_cast<std::streamsize>(line.size()));
        progress.update(++written, so.events);
      }
      progress.done();
    } catch (const std::invalid_argument& e) {
      throw ledger::cli::UsageError(e.what());
    }
    std::cout.flush();
    return std::cout ? ledger::cli::kExitOk : ledger::cli::kExitUsage;
  });
}
