#include "tools/watch_command.h"

#include <signal.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <memory>

#include "ingest/kube/event_poster.h"
#include "ingest/kube/watch_daemon.h"
#include "ingest/net/listen_address.h"
#include "ledger/ledger.h"
#include "replay/fold/replayer.h"
#include "tools/cli.h"
#include "tools/finding_events.h"
#include "tools/fleet_command.h"
#include "tools/ledger_upkeep.h"
#include "tools/live_state.h"
#include "tools/watch/volume_forecast.h"

namespace po = boost::program_options;

namespace ledger::cli {

namespace {

std::chrono::milliseconds ms(const po::variables_map& vm, const char* name) {
  return std::chrono::milliseconds(vm[name].as<long>());
}

// --verify-every: plain seconds, or a duration as ledger-query's steps.
std::chrono::milliseconds verifyInterval(const std::string& value) {
  if (!value.empty() && value.find_first_not_of("0123456789") == std::string::npos) {
    if (value.size() > 9) throw std::invalid_argument("--verify-every '" + value + "' is too long");
    return std::chrono::seconds(std::stol(value));
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::nanoseconds(parseStepArg(value, "--verify-every")));
}

// --retain and --archive-dir: both or neither. The cut needs the rollups
// the checkpoint rounds write, and removes records a publisher may not have
// shipped yet.
void retention(const po::variables_map& vm, const kube::DaemonOptions& o, UpkeepOptions& upkeep) {
  if (!vm.count("retain") && !vm.count("archive-dir")) return;
  if (!vm.count("retain") || !vm.count("archive-dir")) {
    throw std::invalid_argument(
        "--retain DURATION and --archive-dir DIR go together: the records older than DURATION "
        "are moved to the archive in DIR");
  }
  if (upkeep.checkpointEvery == 0) {
    throw std::invalid_argument(
        "--retain needs --checkpoint-every above 0 (the rollups the cut keeps are written "
        "with the checkpoints)");
  }
  if (vm.count("publish")) {
    throw std::invalid_argument(
        "--retain with --publish is not supported: the cut would remove records before the "
        "stream has them");
  }
  upkeep.retain =
      std::chrono::nanoseconds(parseStepArg(vm["retain"].as<std::string>(), "--retain"));
  upkeep.archive.to = vm["archive-dir"].as<std::string>();
  upkeep.archive.projection = o.writer.projection;
  upkeep.archive.checkpointEvery = upkeep.checkpointEvery;
  upkeep.archive.quiet = true;  // a daemon's log, not a terminal
}

// The daemon's and the upkeep's options from the command line; throws
// std::invalid_argument (or the cluster config's error) naming the flag.
void daemonOptions(const po::variables_map& vm, kube::DaemonOptions& o, UpkeepOptions& upkeep) {
  o.cluster =
      kube::resolveClusterConfig(vm["server"].as<std::string>(), vm["kubeconfig"].as<std::string>(),
                                 vm["context"].as<std::string>());
  o.resources = kube::parseResources(vm["resources"].as<std::string>());
  if (vm.count("config-map")) {
    for (const auto& cm : vm["config-map"].as<std::vector<std::string>>()) {
      o.resources.push_back(kube::configMapResource(cm));
    }
  }
  o.listen = vm["listen"].as<std::string>();
  if (o.listen == "off") o.listen.clear();
  if (!o.listen.empty()) net::parseListenAddress(o.listen);
  o.writer.batchRecords = vm["batch"].as<std::size_t>();
  o.writer.projection.kueueConfigMap = vm["kueue-config"].as<std::string>();
  o.writer.flushInterval = ms(vm, "flush-ms");
  o.informer.pageSize = vm["page-size"].as<std::size_t>();
  o.informer.watchTimeout = std::chrono::seconds(std::max(1L, vm["watch-timeout"].as<long>()));
  o.informer.idleTimeout = ms(vm, "idle-timeout-ms");
  if (o.informer.idleTimeout.count() <= 0) {
    o.informer.idleTimeout = 2 * o.informer.watchTimeout + std::chrono::seconds(60);
  }
  o.informer.backoffInitial = ms(vm, "backoff-initial-ms");
  o.informer.backoffMax = ms(vm, "backoff-max-ms");
  o.informer.absentRetry = ms(vm, "absent-retry-ms");
  o.writer.retryInitial = ms(vm, "disk-retry-initial-ms");
  o.writer.retryMax = ms(vm, "disk-retry-max-ms");
  o.writer.snapshotWait = ms(vm, "snapshot-wait-ms");
  o.writer.lateHold = ms(vm, "late-hold-ms");
  if (o.writer.snapshotWait.count() < 0 || o.writer.lateHold.count() < 0) {
    throw std::invalid_argument("--snapshot-wait-ms and --late-hold-ms must not be negative");
  }
  if (o.writer.batchRecords == 0 || o.writer.flushInterval.count() <= 0 ||
      o.informer.pageSize == 0) {
    throw std::invalid_argument("--batch, --flush-ms and --page-size must be positive");
  }
  upkeep.checkpointEvery = vm["checkpoint-every"].as<std::uint64_t>();
  upkeep.verifyEvery = verifyInterval(vm["verify-every"].as<std::string>());
  retention(vm, o, upkeep);
  if (o.writer.retryInitial.count() <= 0 || o.writer.retryMax.count() <= 0) {
    throw std::invalid_argument("--disk-retry-initial-ms and --disk-retry-max-ms must be positive");
  }
}

// SIGTERM/SIGINT are taken synchronously by the main thread (waitForStop);
// every thread started after this (RocksDB's too, at open) inherits the
// mask. A peer closing a socket is not fatal.
sigset_t blockStopSignals() {
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return stopSignals;
}

// --publish: the committed records go to NATS JetStream on a thread of
// their own (ingest/fleet/publisher.h); an outage never holds commits.
// Null without --publish; throws ProgramError.
std::unique_ptr<fleet::Publisher> startPublisher(const po::variables_map& vm, Ledger& ledger) {
  if (!vm.count("publish")) return nullptr;
  auto publisher = makePublisher(vm, ledger, vm["publish"].as<std::string>());
  publisher->start();
  spdlog::info("publishing to NATS ({}) as cluster {}, from seq {}",
               vm["publish"].as<std::string>(), vm["cluster-name"].as<std::string>(),
               publisher->mark() + 1);
  return publisher;
}

// Waits for SIGTERM or SIGINT (blocked in every thread, taken here) or the
// daemon's failure.
void waitForStop(const sigset_t& stopSignals, const kube::WatchDaemon& daemon) {
  const timespec tick{0, 200 * 1000 * 1000};
  for (;;) {
    const int sig = sigtimedwait(&stopSignals, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("received {}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      return;
    }
    if (daemon.failed()) return;
  }
}

}  // namespace

po::options_description watchOptions() {
  po::options_description opts("Live source (--watch): list+watch the Kubernetes API as a daemon");
  // clang-format off
  opts.add_options()
    ("watch", "run as a daemon recording live changes from the API server (until SIGTERM)")
    ("server", po::value<std::string>()->default_value(""), "API server URL; plain http only on loopback (tests, kubectl proxy)")
    ("kubeconfig", po::value<std::string>()->default_value(""), "kubeconfig file (default $KUBECONFIG, then in-cluster, then ~/.kube/config)")
    ("context", po::value<std::string>()->default_value(""), "kubeconfig context (default: current-context)")
    ("resources", po::value<std::string>()->default_value("default"), "comma-separated RESOURCE[.GROUP][@VERSION|VERSION], 'default' for the contract's list")
    ("config-map", po::value<std::vector<std::string>>(), "also watch this ConfigMap, NAMESPACE/NAME (repeatable)")
    ("listen", po::value<std::string>()->default_value(kube::kDefaultListen), "address for /healthz, /readyz, /metrics ('off' for none; ':PORT' for all interfaces)")
    ("flush-ms", po::value<long>()->default_value(200), "commit a batch at most this long after its first event (--batch bounds its size)")
    ("page-size", po::value<std::size_t>()->default_value(500), "LIST page size (limit)")
    ("watch-timeout", po::value<long>()->default_value(300), "seconds a watch asks the server to stay open (randomised up to twice that)")
    ("idle-timeout-ms", po::value<long>()->default_value(0), "reconnect a watch that sends nothing this long (0: twice --watch-timeout plus a minute)")
    ("backoff-initial-ms", po::value<long>()->default_value(500), "first reconnect delay (doubles, with jitter)")
    ("backoff-max-ms", po::value<long>()->default_value(30000), "longest reconnect delay")
    ("absent-retry-ms", po::value<long>()->default_value(60000), "how often to look again for a resource the API does not serve")
    ("disk-retry-initial-ms", po::value<long>()->default_value(1000), "on a full disk, first wait before a commit is tried again (doubles)")
    ("disk-retry-max-ms", po::value<long>()->default_value(30000), "on a full disk, longest wait between commit attempts")
    ("snapshot-wait-ms", po::value<long>()->default_value(120000), "how long a snapshot (the first sync, a relist) holds the Workloads back for LISTs of the other resources that have not begun or ended")
    ("late-hold-ms", po::value<long>()->default_value(1000), "how long late watch events (a backlog after downtime) are held to be recorded in the order of their own times")
    ("emit-events", "post a Kubernetes Event (Warning) on a Workload when a finding about it opens (needs RBAC create on events)")

    ("verify-every", po::value<std::string>()->default_value("1h"), "check the hash chain of the records committed since the last check this often, in the background: seconds or a duration (30m, 1h); 0: never")
    ("retain", po::value<std::string>(), "keep this much history in the ledger (a duration: 30d, 12w, at most a year) and archive older records, on whole hours, into --archive-dir, in the background")
    ("archive-dir", po::value<std::string>(), "--retain: the archive older records are moved to (ledger-replay archive --to; extended at each round)");
  // clang-format on
  return opts;
}

int runWatch(const po::variables_map& vm) {
  const sigset_t stopSignals = blockStopSignals();
  kube::DaemonOptions o;
  UpkeepOptions upkeep;
  try {
    daemonOptions(vm, o, upkeep);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitUsage;
  }

  // Before the ledger is opened: a second daemon started on a taken port
  // would otherwise create its ledger directory, then fail to bind.
  if (!o.listen.empty()) {
    const auto [host, port] = net::parseListenAddress(o.listen);
    if (!net::canListen(host, port)) {
      spdlog::error("--listen {}: cannot bind (in use?)", o.listen);
      return kExitUsage;
    }
  }
  const std::string dir = resolveLedgerDir(vm["ledger"].as<std::string>());
  std::unique_ptr<Ledger> ledger;
  Ledger::Options lo;
  lo.sync = !vm.count("no-sync");
  lo.maxWalBytes = kLiveMaxTotalWalBytes;
  if (Status st = Ledger::open(dir, lo, &ledger); !st.isOk()) {
    spdlog::error("{}", st.toString());
    return exitCodeFor(st);
  }
  spdlog::info("ledger {} at seq {}; commits {}", dir, ledger->lastSeq(),
               lo.sync ? "are fsync'd" : "are not fsync'd (--no-sync)");
  // The folded state /metrics reports, restored before the first commit so
  // that every commit after it is folded.
  std::unique_ptr<LiveState> live;
  try {
    live = std::make_unique<LiveState>(*ledger);
  } catch (const replay::ReplayError& e) {
    spdlog::error("restoring the live state failed: {}", e.what());
    return exitCodeFor(e.status());
  }
  // Checkpoints, rollups and chain checks on a thread of their own
  // (tools/ledger_upkeep.h says why); stopped after the daemon, before the
  // ledger closes.
  LedgerUpkeep keeper(*ledger, upkeep);
  keeper.start();
  std::unique_ptr<fleet::Publisher> publisher;
  try {
    publisher = startPublisher(vm, *ledger);
  } catch (const ProgramError& e) {
    spdlog::error("{}", e.what());
    return e.code();
  }
  fleet::Publisher* shipping = publisher.get();
  // The days until the ledger's volume is full, sampled at each scrape
  // (tools/watch/volume_forecast.h): an hour's growth smooths a burst of
  // admissions without hiding a day's trend.
  VolumeForecast volume(ledger->directory(), std::chrono::hours(1));
  o.writer.afterCommit = [&live, &keeper, shipping](std::uint64_t first, std::uint64_t last) {
    live->afterCommit(first, last);
    keeper.afterCommit(last);
    if (shipping != nullptr) shipping->wake();
  };
  o.extraMetrics = [&live, &keeper, &volume, shipping](std::int64_t nowNs) {
    return live->metricsText(nowNs) + keeper.metricsText(nowNs) + volume.metricsText(nowNs) +
           (shipping != nullptr ? shipping->metricsText(nowNs) : std::string());
  };
  kube::WatchDaemon daemon(*ledger, o);
  // Declared after the daemon: the poster counts into its metrics.
  std::unique_ptr<kube::EventPoster> poster;
  std::unique_ptr<FindingEvents> findingEvents;
  if (vm.count("emit-events")) {
    kube::EventPosterOptions eo;
    eo.backoffInitial = o.informer.backoffInitial;
    eo.backoffMax = o.informer.backoffMax;
    try {
      poster = std::make_unique<kube::EventPoster>(o.cluster, daemon.metrics(), eo);
    } catch (const std::exception& e) {
      spdlog::error("--emit-events: {}", e.what());
      return kExitUsage;
    }
    findingEvents = std::make_unique<FindingEvents>(*live, *poster);
    poster->start();
    findingEvents->start();
    spdlog::info("posting an Event on a Workload when a finding about it opens (--emit-events)");
  }
  try {
    daemon.start();
  } catch (const ingest::LedgerError& e) {
    spdlog::error("reading the ledger's cursors failed: {}", e.what());
    return exitCodeFor(e.status());
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    daemon.stop();
    return kExitUsage;
  }
  waitForStop(stopSignals, daemon);
  daemon.stop();
  if (findingEvents) findingEvents->stop();
  if (poster) poster->stop();
  keeper.stop();
  if (publisher) publisher->stop();
  if (daemon.failed()) {
    const Status st = daemon.failure();
    spdlog::error("exiting: the ledger refused a write: {}", st.toString());
    return exitCodeFor(st);
  }
  return kExitOk;
}

}  // namespace ledger::cli
