#include "tools/fleet_command.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>

#include "ingest/fleet/fleet_consumer.h"
#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/head_signature.h"
#include "ingest/fleet/shipped_record.h"
#include "ingest/kube/health_server.h"
#include "tools/ledger_upkeep.h"

namespace po = boost::program_options;

namespace ledger::cli {

namespace {

// Lock-free, so the signal handler may set it.
std::atomic<bool> gFleetStop = false;
void onFleetSignal(int) { gFleetStop = true; }

// The exit code for a fleet error (fleet_error.h): the one mapping.
int exitCodeForFleet(const fleet::FleetError& e) {
  switch (e.kind()) {
    case fleet::FleetError::Kind::kGap:
      return kExitInput;
    case fleet::FleetError::Kind::kTransport:
      return kExitLive;
    case fleet::FleetError::Kind::kLedger:
      return exitCodeFor(e.status());
    case fleet::FleetError::Kind::kConfig:
      return kExitUsage;
  }
  return kExitUsage;
}

void addNatsOptions(po::options_description& opts) {
  // clang-format off
  opts.add_options()
    ("cluster-name", po::value<std::string>(), "this cluster's name in the fleet: a DNS label (lowercase letters, digits, '-')")
    ("stream", po::value<std::string>()->default_value(fleet::kDefaultStream), "the JetStream stream (created when absent, subjects ledger.*.records)")
    ("stream-replicas", po::value<int>()->default_value(1), "replicas of the stream when this creates it (3 on a 3-node NATS cluster)")
    ("nats-token-file", po::value<std::string>(), "a file holding the token the NATS servers require")
    ("nats-user-file", po::value<std::string>(), "a file holding USER:PASSWORD, this program's NATS user (deploy/fleet/nats.yaml gives each cluster one that may publish only on its own subjects)")
    ("nats-ca", po::value<std::string>(), "PEM CA that signed the NATS servers' TLS certificates (tls:// URLs)")
    ("signing-key", po::value<std::string>(), "publishing: this cluster's private key (ledger-replay keygen); every message is signed with it");
  // clang-format on
}

std::shared_ptr<const fleet::SigningKey> signingKeyFrom(const po::variables_map& vm) {
  if (!vm.count("signing-key")) return nullptr;
  try {
    return std::make_shared<const fleet::SigningKey>(vm["signing-key"].as<std::string>());
  } catch (const fleet::FleetError& e) {
    throw UsageError(std::string("--signing-key: ") + e.what());
  }
}

// --trusted-keys DIR, or nullptr with --allow-unsigned; neither is a usage
// error: a fleet takes unsigned records only when told to.
std::shared_ptr<const fleet::TrustedKeys> trustedKeysFrom(const po::variables_map& vm) {
  if (vm.count("trusted-keys") && vm.count("allow-unsigned")) {
    throw UsageError("--trusted-keys and --allow-unsigned exclude each other");
  }
  if (vm.count("allow-unsigned")) return nullptr;
  if (!vm.count("trusted-keys")) {
    throw UsageError(
        "--from-nats needs --trusted-keys DIR (one CLUSTER.pub per cluster), or --allow-unsigned "
        "to take any publisher's records on their chain alone");
  }
  try {
    auto keys = std::make_shared<const fleet::TrustedKeys>(vm["trusted-keys"].as<std::string>());
    if (keys->clusters().empty()) {
      throw UsageError("--trusted-keys " + vm["trusted-keys"].as<std::string>() +
                       " holds no CLUSTER.pub");
    }
    return keys;
  } catch (const fleet::FleetError& e) {
    throw UsageError(std::string("--trusted-keys: ") + e.what());
  }
}

fleet::NatsOptions natsOptionsFrom(const po::variables_map& vm, const std::string& urls) {
  fleet::NatsOptions n;
  n.urls = urls;
  if (vm.count("nats-token-file")) n.tokenFile = vm["nats-token-file"].as<std::string>();
  if (vm.count("nats-user-file")) n.userFile = vm["nats-user-file"].as<std::string>();
  if (vm.count("nats-ca")) n.caFile = vm["nats-ca"].as<std::string>();
  return n;
}

fleet::StreamSettings streamFrom(const po::variables_map& vm) {
  fleet::StreamSettings s;
  s.name = vm["stream"].as<std::string>();
  s.replicas = vm["stream-replicas"].as<int>();
  if (s.name.empty() || s.name.find_first_of(" .*>\t") != std::string::npos) {
    throw UsageError("--stream '" + s.name + "' is not a stream name (no spaces, '.', '*' or '>')");
  }
  if (s.replicas < 1 || s.replicas > 5) throw UsageError("--stream-replicas must be 1 to 5");
  return s;
}

std::string clusterNameFrom(const po::variables_map& vm, const char* needs) {
  if (!vm.count("cluster-name"))
    throw UsageError(std::string(needs) + " needs --cluster-name NAME");
  const std::string name = vm["cluster-name"].as<std::string>();
  if (!fleet::isClusterName(name)) {
    try {
      fleet::checkClusterName(name, "--cluster-name");
    } catch (const fleet::FleetError& e) {
      throw UsageError(e.what());
    }
  }
  return name;
}

}  // namespace

po::options_description fleetOptions() {
  po::options_description opts(
      "The fleet: ship records through NATS JetStream, or keep the fleet's copies");
  // clang-format off
  opts.add_options()
    ("publish", po::value<std::string>(), "also publish every committed record to NATS JetStream at these URLs (nats://HOST:4222, comma-separated)")
    ("publish-drain-ms", po::value<long>()->default_value(10000), "with --from: at the end, how long to wait for JetStream to acknowledge what is left (the next run resumes the rest)")
    ("from-nats", po::value<std::string>(), "keep the fleet's copies: read every cluster's records from NATS JetStream at these URLs (needs --fleet)")
    ("fleet", po::value<std::string>(), "with --from-nats: the fleet directory, one ledger per cluster under DIR/<cluster>/")
    ("durable", po::value<std::string>()->default_value("fleet"), "with --from-nats: the durable consumer's name")
    ("filter-subject", po::value<std::string>()->default_value(fleet::kStreamSubjects), "with --from-nats: read only these subjects, e.g. ledger.eu-1.records (one consumer per cluster, each with its own --durable)")
    ("exit-when-idle", po::value<double>(), "with --from-nats: exit once caught up and nothing arrived for this many seconds (exit 3 when it refused a message)")
    ("trusted-keys", po::value<std::string>(), "with --from-nats: a directory of CLUSTER.pub files (PEM Ed25519 public keys, several while one rotates); only records its cluster's key signed are committed, other clusters are refused")
    ("allow-unsigned", "with --from-nats: no --trusted-keys; take every publisher's records on their chain alone (the copies are unsigned)")
    ("seq-window", po::value<std::uint64_t>()->default_value(1000000), "with --from-nats: refuse a record more than this many seqs past its copy's head (1 to 1e9)")
    ("max-held-mb", po::value<std::uint64_t>()->default_value(64), "with --from-nats: MiB of records held ahead of gaps, across clusters, at most (1 to 65536)");
  // clang-format on
  addNatsOptions(opts);
  return opts;
}

po::options_description replayFleetOptions() {
  po::options_description opts("The fleet");
  // clang-format off
  opts.add_options()
    ("to", po::value<std::string>(), "publish: NATS URLs (nats://HOST:4222, comma-separated); archive: the new archive's directory")
    ("fleet", po::value<std::string>(), "verify: every cluster's copy in this fleet directory")
    ("trusted-keys", po::value<std::string>(), "verify --fleet: check each copy's head signature against DIR/CLUSTER.pub")
    ("out", po::value<std::string>(), "keygen: the private key's file (its public key goes to FILE.pub)");
  // clang-format on
  addNatsOptions(opts);
  return opts;
}

std::unique_ptr<fleet::Publisher> makePublisher(const po::variables_map& vm, Ledger& ledger,
                                                const std::string& urls) {
  fleet::PublisherOptions o;
  o.nats = natsOptionsFrom(vm, urls);
  o.cluster = clusterNameFrom(vm, "--publish");
  o.stream = streamFrom(vm);
  o.signingKey = signingKeyFrom(vm);
  try {
    return std::make_unique<fleet::Publisher>(ledger, std::move(o));
  } catch (const fleet::FleetError& e) {
    throw ProgramError(e.what(), exitCodeForFleet(e));
  }
}

int runPublish(const po::variables_map& vm, const std::string& ledgerDir) {
  if (!vm.count("to")) throw UsageError("publish needs --to nats://HOST:4222");
  std::unique_ptr<Ledger> ledger = openForWriting(ledgerDir);
  fleet::PublisherOptions o;
  o.nats = natsOptionsFrom(vm, vm["to"].as<std::string>());
  o.cluster = clusterNameFrom(vm, "publish");
  o.stream = streamFrom(vm);
  if (vm.count("from-seq") && !vm["from-seq"].defaulted()) {
    o.fromSeq = vm["from-seq"].as<std::uint64_t>();
  }
  o.signingKey = signingKeyFrom(vm);
  const std::string cluster = o.cluster;
  const std::string stream = o.stream.name;
  std::signal(SIGINT, onFleetSignal);
  std::signal(SIGTERM, onFleetSignal);
  try {
    fleet::Publisher publisher(*ledger, std::move(o));
    const std::uint64_t last = ledger->lastSeq();
    const bool done =
        publisher.publishThrough(last, &gFleetStop, std::chrono::steady_clock::time_point::max());
    if (!done) {
      spdlog::error(
          "interrupted before JetStream acknowledged seq {} (the publish mark stands at seq {}); "
          "run it again to go on",
          last, publisher.mark());
      return kExitLive;
    }
    std::cout << "published through seq " << last << " to stream " << stream << " as cluster "
              << cluster << " (acknowledged through seq " << publisher.mark() << ")\n";
    return kExitOk;
  } catch (const fleet::FleetError& e) {
    throw ProgramError(e.what(), exitCodeForFleet(e));
  }
}

int runKeygen(const po::variables_map& vm) {
  if (!vm.count("out")) throw UsageError("keygen needs --out FILE");
  const std::string path = vm["out"].as<std::string>();
  try {
    fleet::generateSigningKey(path);
  } catch (const fleet::FleetError& e) {
    throw ProgramError(e.what(), exitCodeForFleet(e));
  }
  std::cout << "wrote the private key " << path << " (mode 0600) and its public key " << path
            << ".pub\n";
  return kExitOk;
}

namespace {

// The consumer's options from the command line, checked (UsageError).
fleet::FleetConsumerOptions consumerOptionsFrom(const po::variables_map& vm) {
  fleet::FleetConsumerOptions o;
  o.nats = natsOptionsFrom(vm, vm["from-nats"].as<std::string>());
  o.stream = streamFrom(vm);
  o.durable = vm["durable"].as<std::string>();
  if (o.durable.empty() || o.durable.find_first_of(" .*>\t") != std::string::npos) {
    throw UsageError("--durable '" + o.durable + "' is not a consumer name");
  }
  o.filterSubject = vm["filter-subject"].as<std::string>();
  if (o.filterSubject != fleet::kStreamSubjects) {
    const std::string& f = o.filterSubject;
    const std::string cluster = f.size() > 15 && f.starts_with("ledger.") && f.ends_with(".records")
                                    ? f.substr(7, f.size() - 15)
                                    : std::string();
    if (!fleet::isClusterName(cluster)) {
      throw UsageError(
          "--filter-subject must be ledger.*.records or ledger.<cluster>.records, not '" + f + "'");
    }
  }
  o.batch = vm["batch"].as<std::size_t>();
  // One fetch: JetStream's pull request counts messages in an int.
  if (o.batch == 0 || o.batch > 100000) throw UsageError("--batch must be 1 to 100000");
  o.seqWindow = vm["seq-window"].as<std::uint64_t>();
  if (o.seqWindow == 0 || o.seqWindow > 1000000000) {
    throw UsageError("--seq-window must be 1 to 1000000000");
  }
  const std::uint64_t heldMb = vm["max-held-mb"].as<std::uint64_t>();
  if (heldMb == 0 || heldMb > 65536) throw UsageError("--max-held-mb must be 1 to 65536");
  o.maxHeldBytes = static_cast<std::size_t>(heldMb) << 20;
  o.sync = !vm.count("no-sync");
  o.trustedKeys = trustedKeysFrom(vm);
  if (!o.trustedKeys) {
    spdlog::warn(
        "fleet: --allow-unsigned: records are taken on their chain alone; anyone who "
        "can publish on the stream can write a cluster's history");
  }
  o.projection.kueueConfigMap = vm["kueue-config"].as<std::string>();
  return o;
}

}  // namespace

int runFleetConsumer(const po::variables_map& vm) {
  if (!vm.count("fleet")) throw UsageError("--from-nats needs --fleet DIR");
  fleet::FleetConsumerOptions o = consumerOptionsFrom(vm);
  std::optional<std::chrono::milliseconds> idle;
  if (vm.count("exit-when-idle")) {
    const double seconds = vm["exit-when-idle"].as<double>();
    if (!(seconds >= 0) || seconds > 1e6)
      throw UsageError("--exit-when-idle must be 0 to 1e6 seconds");
    idle = std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  }
  std::string listen = vm["listen"].as<std::string>();
  if (listen == "off") listen.clear();
  // Checkpoints and rollups of each copy on a thread of their own, as the
  // sidecar keeps them (tools/ledger_upkeep.h): fleet questions load them.
  UpkeepOptions upkeep;
  upkeep.checkpointEvery = vm["checkpoint-every"].as<std::uint64_t>();
  // Declared before the upkeeps, so destroyed after them, whatever ends the
  // run: their threads read the copies the consumer owns.
  std::unique_ptr<fleet::FleetConsumer> consumer;
  std::map<std::string, std::unique_ptr<LedgerUpkeep>> upkeeps;
  o.afterCommit = [&](const std::string& cluster, Ledger& copy, std::uint64_t, std::uint64_t last) {
    auto& u = upkeeps[cluster];
    if (!u) {
      u = std::make_unique<LedgerUpkeep>(copy, upkeep);
      u->start();
    }
    u->afterCommit(last);
  };
  // Ready (/readyz) once the consumer has caught up with the stream.
  kube::Metrics metrics;
  const std::string readiness = "stream " + o.stream.name;
  metrics.registerResource(readiness);
  metrics.setState(readiness, kube::ResourceState::kSyncing);
  o.onCaughtUp = [&metrics, readiness] {
    if (metrics.state(readiness) != kube::ResourceState::kSynced) {
      metrics.setState(readiness, kube::ResourceState::kSynced);
    }
  };
  // Not ready from the moment the durable or the stream is found gone until
  // the consumer has caught up again.
  o.onGone = [&metrics, readiness] {
    if (metrics.state(readiness) != kube::ResourceState::kSyncing) {
      metrics.setState(readiness, kube::ResourceState::kSyncing);
    }
  };
  const std::string dir = vm["fleet"].as<std::string>();
  std::signal(SIGINT, onFleetSignal);
  std::signal(SIGTERM, onFleetSignal);
  try {
    consumer = std::make_unique<fleet::FleetConsumer>(dir, std::move(o));
  } catch (const fleet::FleetError& e) {
    throw ProgramError(e.what(), exitCodeForFleet(e));
  }
  std::atomic<bool> failed = false;
  kube::HealthServer server(
      metrics, [&] { return !failed.load(); },
      [&](std::int64_t nowNs) { return consumer->metricsText(nowNs); });
  if (!listen.empty()) {
    try {
      server.start(listen);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
  }
  int code = kExitOk;
  try {
    consumer->run(gFleetStop, idle);
  } catch (const fleet::FleetError& e) {
    failed = true;
    spdlog::error("fleet: {}", e.what());
    code = exitCodeForFleet(e);
  }
  server.stop();
  upkeeps.clear();  // their threads stop before the copies close
  const auto gaps = consumer->gaps();
  if (code == kExitOk && !gaps.empty()) {
    for (const auto& g : gaps) {
      spdlog::error(
          "fleet: cluster {}: records {}..{} are missing (ledger-replay publish "
          "--from-seq {} on that cluster fills them)",
          g.cluster, g.first, g.last, g.first);
    }
    code = kExitInput;
  }
  if (code == kExitOk && consumer->refusedCount() > 0) {
    spdlog::error("fleet: {} messages refused (terminated on the stream; see above)",
                  consumer->refusedCount());
    code = kExitCorrupt;
  }
  for (const auto& [cluster, seq] : consumer->clusters()) {
    std::cout << "cluster " << cluster << ": seq " << seq << "\n";
  }
  return code;
}

}  // namespace ledger::cli
