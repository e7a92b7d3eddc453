// ledger-ingest: append Kubernetes watch events to a ledger from files or
// stdin (docs/reference.md "Input"). Every rejected value is reported on stderr with
// its position and reason; everything accepted is committed; exit 2 if any
// value was rejected. SIGTERM or SIGINT stops reading: what was read is
// committed, where it stopped is reported, and the exit code is 4. With --watch it is the sidecar
// daemon instead (watch_command.h).
#include <kj/exception.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <boost/program_options.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <streambuf>

#include "ingest/ingester.h"
#include "ingest/stream_ingest.h"
#include "ledger/ledger.h"
#include "replay/fold/checkpoints.h"
#include "replay/kueue/usage_rollups.h"
#include "tools/cli.h"
#include "tools/fleet_command.h"
#include "tools/progress.h"
#include "tools/watch_command.h"

namespace po = boost::program_options;
using namespace ledger;

namespace {

// Lock-free, so a signal handler may set them (C++17 [support.signal]).
std::atomic<bool> gStop = false;
std::atomic<int> gSignal = 0;
void onSignal(int sig) {
  gSignal = sig;
  gStop = true;
}

// stdin for `--from -`, read with poll(2) in slices so that a signal ends
// a read that waits for input: std::cin would block in read(2) (restarted
// after the handler, SA_RESTART) until the writer of the pipe, say an idle
// `kubectl get -w`, sends more, and the stop flag is only polled between
// values. At the stop it reports end of input; what it had read is handed on.
class StdinBuffer : public std::streambuf {
 protected:
  int_type underflow() override {
    while (!gStop) {
      pollfd p{STDIN_FILENO, POLLIN, 0};
      const int ready = ::poll(&p, 1, 100);
      if (ready < 0 && errno != EINTR) return traits_type::eof();
      if (ready <= 0) continue;
      const ssize_t n = ::read(STDIN_FILENO, buffer_, sizeof buffer_);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return traits_type::eof();
      setg(buffer_, buffer_, buffer_ + n);
      return traits_type::to_int_type(*gptr());
    }
    return traits_type::eof();
  }

 private:
  char buffer_[64 * 1024];
};

struct SourceTotals {
  std::uint64_t values = 0;
  std::uint64_t rejected = 0;
  bool interrupted = false;
};

void ingestFrom(std::istream& in, const std::string& label, const std::string& source,
                ingest::Ingester& ingester, const ingest::ProjectionOptions& projection,
                SourceTotals* totals) {
  ingest::StreamOptions options;
  options.reader.projectionOptions = projection;
  options.reader.dropManagedFields = true;  // the Ingester drops them anyway
  options.reader.storedJson = true;
  options.reader.projection = true;  // projected from the DOM, the value kept small
  options.stop = &gStop;
  options.onRejected = [&](const ingest::StreamRejection& r) {
    spdlog::error("{}:{} (byte {}): rejected: {}", label, r.line, r.offset, r.reason);
  };
  const ingest::StreamTotals t = ingest::ingestStream(in, source, ingester, options);
  totals->values += t.values;
  totals->rejected += t.rejected;
  if (t.interrupted) {
    // Where the run stopped, so an operator can tell what is left: the
    // source's cursor (committed with the last batch by the caller's flush)
    // is the byte after the last value read. Ingest is idempotent, so the
    // same command again completes the input, each event recorded once.
    totals->interrupted = true;
    spdlog::error(
        "{}: interrupted by {} after {} values ({} bytes); everything read is committed and the "
        "source's cursor stands at byte {}; run the same command again to finish (what is "
        "recorded already is skipped)",
        label, gSignal == SIGINT ? "SIGINT" : "SIGTERM", t.values, t.bytes, t.bytes);
  }
}

// Each --from in order: a file, or stdin for "-"; after a signal the rest
// are named as not read.
void ingestPaths(const std::vector<std::string>& paths, ingest::Ingester& ingester,
                 const ingest::ProjectionOptions& projection, SourceTotals* totals) {
  for (const std::string& path : paths) {
    if (gStop) {
      if (!totals->interrupted) {
        spdlog::error("interrupted by {} before reading {}",
                      gSignal == SIGINT ? "SIGINT" : "SIGTERM", path);
      } else {
        spdlog::error("{}: not read (interrupted)", path);
      }
      totals->interrupted = true;
      continue;
    }
    if (path == "-") {
      StdinBuffer buffer;
      std::istream in(&buffer);
      ingestFrom(in, "stdin", "stdin", ingester, projection, totals);
      continue;
    }
    // A directory opens as a stream that reads nothing: without this
    // check it "succeeded" with 0 values. It is input that cannot be read,
    // like a missing file: named, counted as rejected, exit 2.
    std::error_code dirError;
    if (std::filesystem::is_directory(path, dirError)) {
      spdlog::error("{}: cannot read: is a directory", path);
      ++totals->rejected;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      spdlog::error("{}: cannot open: {}", path, std::strerror(errno));
      ++totals->rejected;
      continue;
    }
    std::error_code ec;
    auto abs = std::filesystem::absolute(path, ec);
    ingestFrom(in, path, "file:" + (ec ? path : abs.string()), ingester, projection, totals);
  }
}

// The checkpoints and usage rollups due after the run, each with its bar on
// a terminal. Derived data: failing to write them loses nothing (a warning).
void writeDerived(Ledger& ledger, std::uint64_t every, bool quiet) {
  try {
    cli::ProgressBar checkpoints("checkpoint", quiet);
    replay::writeCheckpoints(ledger, every, checkpoints.callback());
    checkpoints.done();
    if (every == 0) return;
    cli::ProgressBar rollups("usage rollups", quiet);
    replay::FoldOptions fo;
    fo.progress = rollups.callback();
    replay::writeUsageRollups(ledger, fo);
  } catch (const replay::ReplayError& e) {
    spdlog::warn("checkpoints or usage rollups not written: {}", e.what());
  } catch (const kj::Exception& e) {
    spdlog::warn("checkpoints or usage rollups not written: {}", replay::damagedObject(e).what());
  } catch (const std::overflow_error& e) {
    // A quantity past the exact range: the state report names it as a
    // finding; the integrals cannot be stored, the records are.
    spdlog::warn("checkpoints or usage rollups not written: {}", e.what());
  }
}

po::options_description ingestOptions() {
  po::options_description opts("ledger-ingest: append Kubernetes watch events to a ledger");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("version", "print the version")
    ("ledger", po::value<std::string>()->default_value(""), "ledger directory (default $LEDGER_DIR, else ./ledger-data)")
    ("from", po::value<std::vector<std::string>>(), "input file, or - for stdin (repeatable)")
    ("quiet", "--from: no progress line (nor checkpoint and rollup bars) on a terminal")
    ("batch", po::value<std::size_t>()->default_value(1000), "records per atomic commit")
    ("no-sync", "do not fsync each commit (faster; a crash may lose the last commits, never corrupt)")
    ("checkpoint-every", po::value<std::uint64_t>()->default_value(replay::kDefaultCheckpointInterval), "write a checkpoint every N records and the usage rollups: after ingesting, or with --watch in the background as records are committed (0: neither)")
    ("kueue-config", po::value<std::string>()->default_value(ingest::ProjectionOptions().kueueConfigMap), "the ConfigMap, NAMESPACE/NAME, whose controller_manager_config.yaml Kueue reads; any other is recorded but never changes the DRA mapping")
    ("output,o", po::value<std::string>()->default_value(""), "summary format: json or table")
    ("log-format", po::value<std::string>()->default_value("text"), "text or json")
    ("log-level", po::value<std::string>()->default_value("info"), "trace, debug, info, warn, error");
  // clang-format on
  opts.add(cli::watchOptions());
  opts.add(cli::fleetOptions());
  return opts;
}

// The sources exclude each other, and one is needed.
void checkSources(const po::variables_map& vm) {
  if (vm.count("watch") + vm.count("from") + vm.count("from-nats") > 1) {
    throw cli::UsageError("--watch, --from and --from-nats exclude each other");
  }
  if (!vm.count("from") && !vm.count("watch") && !vm.count("from-nats")) {
    throw cli::UsageError(
        "nothing to ingest: give --from PATH, --from -, --watch or --from-nats URL --fleet DIR");
  }
  if (vm.count("from-nats") && vm.count("publish")) {
    throw cli::UsageError("--publish goes with --from or --watch, not --from-nats");
  }
  try {
    ingest::checkKueueConfigMap(vm["kueue-config"].as<std::string>());
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(e.what());
  }
}

// What a run read, recorded and skipped, on stdout.
void printSummary(cli::OutputFormat output, const SourceTotals& totals,
                  const ingest::IngestStats& s, std::uint64_t firstSeq, std::uint64_t lastSeq,
                  bool storageFailed) {
  if (s.farFuture > 0) {
    spdlog::warn("{} event time(s) more than a day ahead of the clock (the first {} named above)",
                 s.farFuture, std::min<std::uint64_t>(s.farFuture, ingest::kFarFutureNamed));
  }
  if (s.timesRaised > 0) {
    spdlog::warn("{} event time(s) earlier than the previous record were raised to it",
                 s.timesRaised);
  }
  if (output == cli::OutputFormat::kJson) {
    nlohmann::json j = {{"values", totals.values},
                        {"recorded", s.recorded},
                        {"duplicates", s.duplicates},
                        {"rejected", totals.rejected},
                        {"bookmarks", s.bookmarks},
                        {"errorEvents", s.errorEvents},
                        {"timesRaised", s.timesRaised},
                        {"farFuture", s.farFuture},
                        {"lastSeq", lastSeq},
                        {"firstSeq", s.recorded ? firstSeq : 0},
                        {"interrupted", totals.interrupted},
                        {"storageFailed", storageFailed}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "read " << totals.values << " values: recorded " << s.recorded << ", duplicates "
              << s.duplicates << ", rejected " << totals.rejected << " (bookmarks " << s.bookmarks
              << ", error events " << s.errorEvents << "); ledger at seq " << lastSeq << "\n";
  }
}

// After the input: the publisher drained as far as it goes in its time,
// then the derived data of a run that read everything.
void finishRun(const po::variables_map& vm, Ledger& ledger, fleet::Publisher* publisher,
               bool complete) {
  if (publisher) {
    publisher->stop(std::chrono::milliseconds(vm["publish-drain-ms"].as<long>()));
    if (publisher->mark() < ledger.lastSeq()) {
      spdlog::warn(
          "JetStream acknowledged through seq {} of {}; the next run with --publish (or "
          "ledger-replay publish) ships the rest",
          publisher->mark(), ledger.lastSeq());
    }
  }
  // What was read is committed: a signal from here on ends the process
  // at once. Checkpoints are derived data: failing to write them loses
  // nothing, and an interrupted run leaves them to the run that finishes.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (complete) {
    writeDerived(ledger, vm["checkpoint-every"].as<std::uint64_t>(), vm.count("quiet") > 0);
  }
}

// --from: the files and stdin in order into the ledger.
int runFiles(const po::variables_map& vm, cli::OutputFormat output) {
  // Before the ledger is opened (and created): a commit of no records
  // would never move the input on.
  if (vm["batch"].as<std::size_t>() == 0) throw cli::UsageError("--batch must be at least 1");
  const std::string dir = cli::resolveLedgerDir(vm["ledger"].as<std::string>());
  std::unique_ptr<Ledger> ledger;
  Ledger::Options lo;
  lo.sync = !vm.count("no-sync");
  if (Status st = Ledger::open(dir, lo, &ledger); !st.isOk()) {
    spdlog::error("{}", st.toString());
    return cli::exitCodeFor(st);
  }
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);

  ingest::IngestOptions io;
  io.batchRecords = vm["batch"].as<std::size_t>();
  io.projection.kueueConfigMap = vm["kueue-config"].as<std::string>();
  // --publish: ships what is committed on a thread of its own; recording
  // never waits for NATS (ingest/fleet/publisher.h).
  std::unique_ptr<fleet::Publisher> publisher;
  if (vm.count("publish")) {
    publisher = cli::makePublisher(vm, *ledger, vm["publish"].as<std::string>());
    publisher->start();
  }
  // On a terminal, the records committed so far (the total of a stream is
  // unknown); the ingester commits on one thread, the bar's only caller.
  cli::ProgressBar progress("ingest", vm.count("quiet") > 0);
  io.onCommit = [p = publisher.get(), &progress,
                 first = ledger->lastSeq() + 1](const AppendResult& r) {
    if (p) p->wake();
    if (r.lastSeq >= first) progress.count(r.lastSeq - first + 1);
  };
  ingest::Ingester ingester(*ledger, io);
  SourceTotals totals;
  const std::uint64_t firstSeq = ledger->lastSeq() + 1;
  // The ledger refusing a write (a full disk) ends the reading, but what
  // was committed before it is said on stdout as after any run, and the
  // exit code is the storage's (4).
  std::optional<Status> storageFailure;
  try {
    ingestPaths(vm["from"].as<std::vector<std::string>>(), ingester, io.projection, &totals);
    ingester.flush();
    progress.done();
  } catch (const ingest::LedgerError& e) {
    progress.done();
    storageFailure = e.status();
    spdlog::error("the ledger refused a write; what is committed up to seq {} stays: {}",
                  ledger->lastSeq(), e.what());
  }
  finishRun(vm, *ledger, publisher.get(), !totals.interrupted && !storageFailure);
  printSummary(output, totals, ingester.stats(), firstSeq, ledger->lastSeq(),
               storageFailure.has_value());
  // An interrupted run did not read all of its input: not a success, and
  // not bad input either; like a live source that failed, running it again
  // is what completes it (docs/reference.md, "Exit codes").
  if (storageFailure) return cli::exitCodeFor(*storageFailure);
  if (totals.interrupted) return cli::kExitLive;
  return totals.rejected > 0 ? cli::kExitInput : cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const po::options_description opts = ingestOptions();
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(opts).run();
    cli::rejectNegativeUnsigned(parsed);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "ledger-ingest: " << e.what() << "\n" << opts;
    return cli::kExitUsage;
  } catch (const cli::UsageError& e) {
    std::cerr << "ledger-ingest: " << e.what() << "\n";
    return cli::kExitUsage;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return cli::kExitOk;
  }
  if (vm.count("version")) {
    std::cout << cli::versionText("ledger-ingest") << "\n";
    return cli::kExitOk;
  }
  return cli::runProgram("ledger-ingest", [&]() -> int {
    cli::setUpLogging(vm["log-format"].as<std::string>(), vm["log-level"].as<std::string>());
    const cli::OutputFormat output = cli::resolveOutput(vm["output"].as<std::string>());
    checkSources(vm);
    if (vm.count("from-nats")) return cli::runFleetConsumer(vm);
    if (vm.count("watch")) return cli::runWatch(vm);
    return runFiles(vm, output);
  });
}
