// ledger-bench: the figures of docs/performance.md, from one command.
//
//   ledger-bench --max N [--sizes 100000,1000000,10000000] [--workdir DIR]
//
// For each size up to --max: generates the simulated cluster's stream
// (tools/generator), then, each phase in its own child process: the raw
// RocksDB write baseline, ingest through the real ingest path, the baseline
// again (the faster of the two counts), a raw scan of the projection, a full
// replay, the raw scan again, checkpoints, point-in-time queries with the
// page cache warm, the full replay again, the questions a user types timed
// end to end with the real ledger-query (end_to_end.h), then the full replay
// and the queries with the ledger dropped from the page cache.
// Before all that, the daemon's path over the stream (its peak RSS,
// live_phase.h); `--live-only` runs that alone.
// Prints a markdown table per size and the scaling rows.
//
//   ledger-bench --ledger DIR --serve-load [--clients 200]
//
// puts `ledger-query serve` on that ledger under concurrent list requests
// (serve_load.h) instead.
//
//   ledger-bench --ledger DIR --metrics-scrape [--runs N]
//
// times the --watch daemon's /metrics on that ledger, first scrape and
// later ones (metrics_scrape.h), instead.
//
//   ledger-bench --ledger DIR [--queries N] [--runs N]
//
// measures an existing ledger instead (one too big to generate within the
// run, or a production one): the same read side (only the checkpoints
// missing are written). Benchmarks are not
// tests: it exits 0 when every phase ran, whatever the numbers; 2 when a
// phase failed, 1 on bad usage.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include "tools/bench/bench_report.h"
#include "tools/bench/end_to_end.h"
#include "tools/bench/live_phase.h"
#include "tools/bench/metrics_scrape.h"
#include "tools/bench/phases.h"
#include "tools/bench/raw_baseline.h"
#include "tools/bench/serve_load.h"
#include "tools/cli.h"
#include "tools/generator/cluster_sim.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace ledger::bench;

namespace {

struct Config {
  std::vector<std::uint64_t> sizes;
  fs::path workdir;
  std::uint64_t seed = 1;
  int nodes = 64, queues = 16, queries = 200;
  int runs = 5;  // timed runs of each end-to-end question
  std::size_t batch = 5000;
  bool keep = false;
  bool liveOnly = false;  // generate and run the daemon's path only
};

std::vector<std::uint64_t> parseSizes(const std::string& text, std::uint64_t max) {
  std::vector<std::uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const std::uint64_t n = std::stoull(item);
    if (n <= max) out.push_back(n);
  }
  if (out.empty()) out.push_back(max);  // a small machine or a smoke test: just --max
  return out;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

void log(std::uint64_t n, const std::string& what) {
  std::cerr << "ledger-bench [" << n << " events] " << what << std::endl;
}

PhaseOutcome faster(PhaseOutcome a, PhaseOutcome b) {
  if (!a.ok) return b;
  if (!b.ok) return a;
  return a.metrics["seconds"] <= b.metrics["seconds"] ? a : b;
}

// The read side of one ledger, each phase in its own child: raw scan, full
// replay, raw scan (the faster scan counts), the checkpoints still missing,
// queries with the page cache warm, the full replay again, the end-to-end
// questions; then the full replay and the queries with the page cache
// dropped.
void measureReadSide(const std::string& dir, int queries, int runs, std::uint64_t seed,
                     const std::function<void(const std::string&)>& log, SizeRun* run) {
  log("raw scan, replay, raw scan");
  PhaseOutcome scan1 = runPhase([&] { return rawScanPhase(dir); });
  run->replay = runPhase([&] { return replayPhase(dir); });
  PhaseOutcome scan2 = runPhase([&] { return rawScanPhase(dir); });
  run->rawScan = faster(scan1, scan2);
  log("checkpoints");
  // Written as ledger-ingest writes them (its last step).
  run->checkpoints = runPhase([&] { return checkpointPhase(dir); }, HugePages::kAsLedgerIngest);
  run->settleCheckpoints = runPhase([&] { return settlePhase(dir); }, HugePages::kAsLedgerIngest);
  run->checkpointBytes = get(run->settleCheckpoints, "bytes.checkpoints");
  log(std::to_string(queries) + " point-in-time queries, page cache warm");
  run->query = runPhase([&] { return queryPhase(dir, queries, seed, PageCache::kWarm); });
  log("replay after the queries");
  run->replayAfterQueries = runPhase([&] { return replayPhase(dir); });
  log("end-to-end questions, " + std::to_string(runs) + " runs of ledger-query each");
  run->facts = runPhase([&] { return factsPhase(dir); });
  if (run->facts.ok) {
    const std::string program = findLedgerQuery();
    for (const EndToEndQuestion& q : endToEndQuestions(factsFrom(run->facts))) {
      run->endToEnd.push_back(askEndToEnd(program, dir, q, runs));
    }
  }
  log("replay and " + std::to_string(queries) + " queries, page cache dropped");
  run->replayCold = runPhase([&] { return replayPhase(dir, PageCache::kCold); });
  run->queryCold = runPhase([&] { return queryPhase(dir, queries, seed, PageCache::kCold); });
}

SizeRun runSize(const Config& c, std::uint64_t n) {
  SizeRun run;
  run.events = n;
  const std::string tag = std::to_string(n);
  const std::string events = (c.workdir / ("events-" + tag + ".jsonl")).string();
  const std::string ledgerDir = (c.workdir / ("ledger-" + tag)).string();
  const std::string rawDir = (c.workdir / ("raw-" + tag)).string();

  log(n, "generating " + events);
  {
    ledger::gen::SimOptions so;
    so.seed = c.seed;
    so.events = n;
    so.nodes = c.nodes;
    so.queues = c.queues;
    std::ofstream out(events, std::ios::binary | std::ios::trunc);
    const double start = nowSeconds();
    ledger::gen::ClusterSim sim(so);
    run.jsonBytes = static_cast<double>(sim.writeAll(out));
    out.close();
    run.generateSeconds = nowSeconds() - start;
    if (!out) throw std::runtime_error("cannot write " + events);
  }
  log(n, "the daemon's live state over the stream");
  const std::string liveDir = (c.workdir / ("live-" + tag)).string();
  run.live = runPhase([&] { return livePhase(events, liveDir); }, HugePages::kAsLedgerIngest);
  std::error_code ec;
  fs::remove_all(liveDir, ec);
  if (c.liveOnly) {
    if (!c.keep) fs::remove(events, ec);
    return run;
  }
  log(n, "raw RocksDB write (1 of 2)");
  PhaseOutcome raw1 =
      runPhase([&] { return rawWrite(events, rawDir, c.batch); }, HugePages::kAsLedgerIngest);
  log(n, "ingest");
  run.ingest =
      runPhase([&] { return ingestPhase(events, ledgerDir, c.batch); }, HugePages::kAsLedgerIngest);
  log(n, "raw RocksDB write (2 of 2)");
  PhaseOutcome raw2 =
      runPhase([&] { return rawWrite(events, rawDir, c.batch); }, HugePages::kAsLedgerIngest);
  run.rawWrite = faster(raw1, raw2);
  log(n, "raw RocksDB write as table files");
  run.rawTableWrite =
      runPhase([&] { return rawTableWrite(events, rawDir, c.batch); }, HugePages::kAsLedgerIngest);
  run.settle = runPhase([&] { return settlePhase(ledgerDir); }, HugePages::kAsLedgerIngest);
  run.ledgerBytes = static_cast<double>(directoryBytes(ledgerDir));
  measureReadSide(
      ledgerDir, c.queries, c.runs, c.seed, [&](const std::string& what) { log(n, what); }, &run);
  if (!c.keep) {
    fs::remove(events, ec);
    fs::remove_all(ledgerDir, ec);
    fs::remove_all(rawDir, ec);
  }
  return run;
}

// The read side on an existing ledger (--ledger).
int runExistingLedger(const std::string& dir, int queries, int runs, std::uint64_t seed) {
  if (!fs::exists(dir)) {
    std::cerr << "ledger-bench: no ledger at " << dir << "\n";
    return ledger::cli::kExitUsage;
  }
  std::cout << "## ledger-bench --ledger " << dir << "\n\n"
            << cpuModel() << ", " << std::thread::hardware_concurrency() << " CPUs.\n";
  SizeRun run;
  run.settle = runPhase([&] { return settlePhase(dir); });
  run.ledgerBytes = get(run.settle, "bytes.total") - get(run.settle, "bytes.checkpoints");
  measureReadSide(
      dir, queries, runs, seed,
      [&](const std::string& what) {
        std::cerr << "ledger-bench [" << dir << "] " << what << std::endl;
      },
      &run);
  run.events = static_cast<std::uint64_t>(get(run.replay, "records"));
  printLedgerTable(std::cout, run, Targets{});
  bool failed = false;
  for (const PhaseOutcome* p : run.readPhases()) failed = failed || !p->ok;
  failed = failed || !run.settle.ok || !run.endToEndOk();
  return failed ? ledger::cli::kExitInput : ledger::cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description opts("ledger-bench: measure the ledger against raw RocksDB");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("version", "print the version")
    ("max", po::value<std::uint64_t>()->default_value(1000000), "largest size to run (bounds the run on small machines)")
    ("sizes", po::value<std::string>()->default_value("100000,1000000,10000000"), "event counts, comma-separated")
    ("workdir", po::value<std::string>()->default_value(""), "scratch directory (default: a new one under $TMPDIR or /tmp, removed after)")
    ("seed", po::value<std::uint64_t>()->default_value(1), "generator seed")
    ("nodes", po::value<int>()->default_value(64), "simulated GPU nodes")
    ("queues", po::value<int>()->default_value(16), "simulated ClusterQueues")
    ("queries", po::value<int>()->default_value(200), "point-in-time queries per size")
    ("runs", po::value<int>()->default_value(5), "timed runs of each end-to-end question (ledger-query)")
    ("batch", po::value<std::size_t>()->default_value(5000), "records per commit, ledger and baseline alike")
    ("keep", "keep the generated streams and databases")
    ("live-only", "generate and measure only the daemon's path (its peak RSS over the stream)")
    ("ledger", po::value<std::string>(), "measure this existing ledger's read side instead")
    ("serve-load", "with --ledger: concurrent list requests to ledger-query serve on it instead")
    ("metrics-scrape", "with --ledger: the --watch daemon's first and later /metrics scrapes on it instead (--runs: later scrapes)")
    ("clients", po::value<int>()->default_value(200), "--serve-load: concurrent requests per round");
  // clang-format on
  po::variables_map vm;
  Config c;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << opts;
      return ledger::cli::kExitOk;
    }
    if (vm.count("version")) {
      std::cout << ledger::cli::versionText("ledger-bench") << "\n";
      return ledger::cli::kExitOk;
    }
    c.sizes = parseSizes(vm["sizes"].as<std::string>(), vm["max"].as<std::uint64_t>());
    c.seed = vm["seed"].as<std::uint64_t>();
    c.nodes = vm["nodes"].as<int>();
    c.queues = vm["queues"].as<int>();
    c.queries = vm["queries"].as<int>();
    c.runs = std::max(1, vm["runs"].as<int>());
    c.batch = vm["batch"].as<std::size_t>();
    c.keep = vm.count("keep") != 0;
    c.liveOnly = vm.count("live-only") != 0;
  } catch (const std::exception& e) {
    std::cerr << "ledger-bench: " << e.what() << "\n" << opts;
    return ledger::cli::kExitUsage;
  }
  if (vm.count("ledger") && vm.count("serve-load")) {
    ServeLoadOptions so;
    so.ledgerDir = vm["ledger"].as<std::string>();
    so.clients = std::max(1, vm["clients"].as<int>());
    so.seed = c.seed;
    try {
      return runServeLoad(so, std::cout) ? ledger::cli::kExitOk : ledger::cli::kExitInput;
    } catch (const std::exception& e) {
      std::cerr << "ledger-bench: " << e.what() << "\n";
      return ledger::cli::kExitInput;
    }
  }
  if (vm.count("ledger") && vm.count("metrics-scrape")) {
    try {
      runMetricsScrape(vm["ledger"].as<std::string>(), c.runs, std::cout);
      return ledger::cli::kExitOk;
    } catch (const std::exception& e) {
      std::cerr << "ledger-bench: " << e.what() << "\n";
      return ledger::cli::kExitInput;
    }
  }
  if (vm.count("ledger"))
    return runExistingLedger(vm["ledger"].as<std::string>(), c.queries, c.runs, c.seed);
  bool ownWorkdir = false;
  std::string workdir = vm["workdir"].as<std::string>();
  if (workdir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ledger-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::cerr << "ledger-bench: cannot create a scratch directory\n";
      return ledger::cli::kExitUsage;
    }
    workdir = pattern;
    ownWorkdir = true;
  }
  c.workdir = workdir;
  fs::create_directories(c.workdir);

  std::cout << "## ledger-bench\n\n"
            << cpuModel() << ", " << std::thread::hardware_concurrency() << " CPUs; seed " << c.seed
            << ", " << c.nodes << " nodes (" << c.nodes * 8 << " GPUs), " << c.queues
            << " ClusterQueues.\n";
  std::vector<SizeRun> runs;
  bool failed = false;
  try {
    for (std::uint64_t n : c.sizes) {
      runs.push_back(runSize(c, n));
      if (c.liveOnly) {
        printLiveTable(std::cout, runs.back());
        failed = failed || !runs.back().live.ok;
        continue;
      }
      printSizeTable(std::cout, runs.back(), c.batch, Targets{});
      std::cout.flush();
      failed = failed || !runs.back().rawWrite.ok || !runs.back().ingest.ok ||
               !runs.back().rawTableWrite.ok || !runs.back().live.ok;
      for (const PhaseOutcome* p : runs.back().readPhases()) failed = failed || !p->ok;
      failed = failed || !runs.back().endToEndOk();
    }
  } catch (const std::exception& e) {
    std::cerr << "ledger-bench: " << e.what() << "\n";
    failed = true;
  }
  if (!c.liveOnly) printScaling(std::cout, runs);
  if (ownWorkdir && !c.keep) {
    std::error_code ec;
    fs::remove_all(c.workdir, ec);
  }
  return failed ? ledger::cli::kExitInput : ledger::cli::kExitOk;
}
