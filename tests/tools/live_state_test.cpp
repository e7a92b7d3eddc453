// The --watch daemon's live state (tools/live_state.h) wired as
// tools/watch_command.cpp wires it, against the fake API server: findings
// (QuotaExceeded; UnchargedDRA for a pod's MIG partition, then its corrected
// charge) open and close on /metrics as the cluster changes, the recomputed usage
// equals the report of a fresh replay of the same ledger, and a restart
// (from a checkpoint plus the records after it) shows the same metrics.
// The exposition is parsed strictly (Prometheus text format 0.0.4).
#include <httplib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "ingest/kube/watch_daemon.h"
#include "ledger/format.h"
#include "ledger/verification_record.h"
#include "ledger/verify.h"
#include "replay/fold/checkpoints.h"
#include "replay/kueue/usage_rollups.h"
#include "schema/k8s/quantity.h"
#include "tests/ingest/fake_apiserver.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tests/tools/dra_cluster_fixture.h"
#include "tools/ledger_upkeep.h"
#include "tools/live_state.h"
#include "tools/render/report_metrics.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;
using namespace std::chrono_literals;

namespace {

using namespace ledger::testing::live;
using Series = std::map<std::string, double>;  // "name{labels}" -> value

bool nameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

// Parses `text` by the text format's rules, failing the test on any line
// that breaks them: "# HELP name text", "# TYPE name type" before the
// family's first sample and once per family, samples "name{l="v",...} value"
// with escaped label values (\\, \", \n), a float value (NaN, +Inf allowed),
// no duplicate series.
Series parseExposition(const std::string& text) {
  Series out;
  std::set<std::string> typed, sampled;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    INFO(line);
    REQUIRE(!line.empty());
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, keyword, name;
      words >> hash >> keyword >> name;
      REQUIRE((keyword == "HELP" || keyword == "TYPE"));
      REQUIRE(!name.empty());
      if (keyword == "TYPE") {
        std::string type;
        words >> type;
        REQUIRE((type == "gauge" || type == "counter"));
        REQUIRE(sampled.count(name) == 0);
        REQUIRE(typed.insert(name).second);
      }
      continue;
    }
    std::size_t i = 0;
    while (i < line.size() && nameChar(line[i], i == 0)) ++i;
    REQUIRE(i > 0);
    const std::string name = line.substr(0, i);
    REQUIRE(typed.count(name) == 1);
    sampled.insert(name);
    std::string series = name;
    if (i < line.size() && line[i] == '{') {
      series += '{';
      ++i;
      bool firstLabel = true;
      while (i < line.size() && line[i] != '}') {
        if (!firstLabel) {
          REQUIRE(line[i] == ',');
          series += line[i++];
        }
        firstLabel = false;
        const std::size_t start = i;
        while (i < line.size() && nameChar(line[i], i == start)) ++i;
        REQUIRE(i > start);
        series += line.substr(start, i - start);
        REQUIRE(line.substr(i, 2) == "=\"");
        series += "=\"";
        i += 2;
        for (;;) {
          REQUIRE(i < line.size());
          if (line[i] == '"') break;
          if (line[i] == '\\') {
            REQUIRE(i + 1 < line.size());
            REQUIRE((line[i + 1] == '\\' || line[i + 1] == '"' || line[i + 1] == 'n'));
            series += line[i++];
          }
          series += line[i++];
        }
        series += line[i++];
      }
      REQUIRE(i < line.size());
      series += line[i++];
    }
    REQUIRE(i < line.size());
    REQUIRE(line[i] == ' ');
    const std::string number = line.substr(i + 1);
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    REQUIRE(!number.empty());
    REQUIRE(end == number.c_str() + number.size());
    REQUIRE(out.emplace(series, v).second);
  }
  return out;
}

std::string scrapeText(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  auto res = c.Get("/metrics");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  return res->body;
}

// `promtool check metrics` (Debian's prometheus package, which
// tools/setup-debian.sh installs) on the exposition: Prometheus' own parser
// and its naming rules. Skipped, with a warning, where promtool is missing.
void checkWithPromtool(const std::string& text) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    WARN("promtool not installed: the exposition is checked by this test's parser only");
    return;
  }
  TempDir dir;
  { std::ofstream(dir.path("metrics.txt"), std::ios::binary) << text; }
  const std::string command = "promtool check metrics < " + dir.path("metrics.txt") + " > " +
                              dir.path("promtool.out") + " 2>&1";
  const int rc = std::system(command.c_str());
  std::ifstream in(dir.path("promtool.out"));
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO("promtool check metrics: " << said);
  CHECK(rc == 0);
}

double valueOf(const Series& s, const std::string& series) {
  auto it = s.find(series);
  return it == s.end() ? -1 : it->second;
}

// The series a fresh replay reports, without the daemon's own.
Series reportSeries(const Series& all) {
  Series out;
  for (const auto& [k, v] : all) {
    if (k.rfind("ledger_cluster_queue_", 0) == 0 || k.rfind("ledger_open_findings", 0) == 0 ||
        k.rfind("ledger_pool_", 0) == 0 || k == "ledger_state_seq") {
      out.emplace(k, v);
    }
  }
  return out;
}

// A Workload in team-a/lq admitted to ClusterQueue team-a, `cpu` charged
// and requested.
Json cpuWorkload(const std::string& name, const std::string& cpu) {
  Json spec = {{"containers", Json::array({container("c", {{"cpu", cpu}})})}};
  return admitted(workload("team-a", name, "lq", Json::array({podSet("main", 1, spec)})), "team-a",
                  "default", {{"cpu", cpu}});
}

struct Daemon {
  std::unique_ptr<cli::LiveState> live;
  std::unique_ptr<cli::LedgerUpkeep> upkeep;  // off unless `upkeepOptions` turn it on
  std::unique_ptr<kube::WatchDaemon> daemon;

  Daemon(Ledger& ledger, const FakeApiServer& server,
         const std::string& resources = kKueueResources,
         cli::UpkeepOptions upkeepOptions = {0, 0ms}) {
    live = std::make_unique<cli::LiveState>(ledger, 50ms);
    upkeep = std::make_unique<cli::LedgerUpkeep>(ledger, upkeepOptions);
    upkeep->start();
    kube::DaemonOptions o;
    o.cluster = kube::serverUrlConfig(server.url());
    o.resources = kube::parseResources(resources);
    o.writer.flushInterval = 20ms;
    o.informer.backoffInitial = 20ms;
    o.informer.backoffMax = 200ms;
    o.listen = "127.0.0.1:0";
    // As tools/watch_command.cpp wires them.
    cli::LiveState* l = live.get();
    cli::LedgerUpkeep* u = upkeep.get();
    o.writer.afterCommit = [l, u](std::uint64_t first, std::uint64_t last) {
      l->afterCommit(first, last);
      u->afterCommit(last);
    };
    o.extraMetrics = [l, u](std::int64_t nowNs) {
      return l->metricsText(nowNs) + u->metricsText(nowNs);
    };
    daemon = std::make_unique<kube::WatchDaemon>(ledger, o);
    daemon->start();
    REQUIRE(FakeApiServer::waitFor([&] { return daemon->metrics().ready(); }, 10000));
  }
  ~Daemon() {
    daemon->stop();
    upkeep->stop();
  }

  Series scrape() { return parseExposition(scrapeText(daemon->listenPort())); }
  // Scrapes until `series` shows `want` (the live state renders at most
  // every 50 ms here).
  Series await(const std::string& series, double want) {
    Series s;
    const bool seen = FakeApiServer::waitFor(
        [&] {
          s = scrape();
          return valueOf(s, series) == want;
        },
        10000);
    INFO(series << " wanted " << want << ", last " << valueOf(s, series));
    REQUIRE(seen);
    return s;
  }
  // Scrapes until the chain check has reached the ledger's head as it is at
  // that scrape: the first sync may still append its snapshot's last records
  // after the caller looked at the head.
  Series awaitVerifiedHead(const Ledger& ledger) {
    Series s;
    std::uint64_t head = 0;
    const bool seen = FakeApiServer::waitFor(
        [&] {
          s = scrape();
          head = ledger.lastSeq();
          return valueOf(s, "ledger_verified_seq") == static_cast<double>(head);
        },
        10000);
    INFO("ledger_verified_seq wanted " << head << ", last " << valueOf(s, "ledger_verified_seq"));
    REQUIRE(seen);
    return s;
  }
};

const std::string kExceeded =
    "ledger_open_findings{type=\"QuotaExceeded\",cluster_queue=\"team-a\"}";
const std::string kReservedCpu =
    "ledger_cluster_queue_reserved{cluster_queue=\"team-a\",flavor=\"default\",resource=\"cpu\"}";
const std::string kNominalCpu =
    "ledger_cluster_queue_nominal_quota{cluster_queue=\"team-a\",flavor=\"default\",resource="
    "\"cpu\"}";

// The usage metrics equal what the real `ledger-query usage --at now` prints
// on the same ledger at the same seq, quota row by quota row (LEDGER_QUERY,
// set by tests/meson.build; skipped with a warning when it is not).
void checkAgainstLedgerQuery(const std::string& ledgerDir, const Series& s) {
  const char* query = std::getenv("LEDGER_QUERY");
  if (query == nullptr) {
    WARN("LEDGER_QUERY not set: the metrics are not compared with ledger-query usage");
    return;
  }
  TempDir out;
  const CommandRun run = runCommand(std::string(query) + " usage --ledger " + ledgerDir +
                                    " --at now -o json > " + out.path("usage.json"));
  INFO(run.output);
  REQUIRE(run.exitCode == 0);
  std::ifstream in(out.path("usage.json"));
  const Json usage = Json::parse(in);
  CHECK(usage["at"]["seq"].get<double>() == valueOf(s, "ledger_state_seq"));
  auto amount = [](const Json& q) {
    return static_cast<double>(Quantity::parse(q.get<std::string>()).nanos()) / 1e9;
  };
  std::size_t rows = 0;
  for (const Json& cq : usage["clusterQueues"]) {
    for (const Json& quota : cq["quotas"]) {
      const std::string labels = "{cluster_queue=\"" + cq["name"].get<std::string>() +
                                 "\",flavor=\"" + quota["flavor"].get<std::string>() +
                                 "\",resource=\"" + quota["resource"].get<std::string>() + "\"}";
      INFO(labels);
      CHECK(valueOf(s, "ledger_cluster_queue_reserved" + labels) ==
            Approx(amount(quota["reserved"])).epsilon(1e-12));
      CHECK(valueOf(s, "ledger_cluster_queue_admitted" + labels) ==
            Approx(amount(quota["admitted"])).epsilon(1e-12));
      CHECK(valueOf(s, "ledger_cluster_queue_nominal_quota" + labels) ==
            Approx(amount(quota["nominal"])).epsilon(1e-12));
      ++rows;
    }
  }
  CHECK(rows > 0);
}

// The metrics a fresh replay of the ledger at `seq` gives.
Series replayed(const Ledger& ledger, std::uint64_t seq) {
  return reportSeries(parseExposition(render::reportToMetrics(reportOf(ledger, seq))));
}

}  // namespace

TEST_CASE(
    "live metrics: a pod's DRA device the workload's quota does not charge opens "
    "UnchargedDRA; the corrected charge closes it",
    "[watch][live]") {
  TempDir dir;
  FakeApiServer server;
  draCluster(server);
  server.start();
  auto ledger = openLedger(dir.path("ledger"));
  Daemon d(*ledger, server, kDraResources);
  const std::string uncharged =
      "ledger_open_findings{type=\"UnchargedDRA\",cluster_queue=\"team-a\"}";
  const std::string consumed =
      "ledger_pool_consumed{driver=\"gpu.nvidia.com\",pool=\"node-1\",counter_set="
      "\"gpu-0-cs\",counter=\"memory\"}";
  Series s = d.await(kReservedCpu, 1);
  CHECK(valueOf(s, uncharged) == 0);
  CHECK(valueOf(s, consumed) == 0);
  CHECK(valueOf(s,
                "ledger_pool_capacity{driver=\"gpu.nvidia.com\",pool=\"node-1\","
                "counter_set=\"gpu-0-cs\",counter=\"memory\"}") == 40320.0 * 1024 * 1024);

  // The Job's pod gets partition mig-a through its claim: held, not charged.
  holdPartition(server);
  s = d.await(uncharged, 1);
  CHECK(valueOf(s, consumed) == 4864.0 * 1024 * 1024);
  // Held, in gpu.memory counter units; its admission charges gpu.memory in
  // no flavor, so flavor "-", all of it uncharged.
  const std::string heldLabels = "{cluster_queue=\"team-a\",flavor=\"-\",resource=\"gpu.memory\"}";
  CHECK(valueOf(s, "ledger_cluster_queue_held" + heldLabels) == 4864.0 * 1024 * 1024);
  CHECK(valueOf(s, "ledger_cluster_queue_uncharged" + heldLabels) == 4864.0 * 1024 * 1024);

  // The charge corrected: the Workload's usage now carries the partition.
  recordUsage(server, {{"cpu", "1"}, {"gpu.memory", "4864Mi"}});
  s = d.await(uncharged, 0);
  CHECK(valueOf(s,
                "ledger_cluster_queue_reserved{cluster_queue=\"team-a\",flavor=\"default\","
                "resource=\"gpu.memory\"}") == 4864.0 * 1024 * 1024);
  // Charged in flavor default now: held there, nothing uncharged.
  const std::string chargedLabels =
      "{cluster_queue=\"team-a\",flavor=\"default\",resource=\"gpu.memory\"}";
  CHECK(valueOf(s, "ledger_cluster_queue_held" + chargedLabels) == 4864.0 * 1024 * 1024);
  CHECK(valueOf(s, "ledger_cluster_queue_uncharged" + chargedLabels) == 0);
  CHECK(valueOf(s, "ledger_cluster_queue_held" + heldLabels) == -1);  // gone
  REQUIRE(FakeApiServer::waitFor([&] { return d.live->seq() == ledger->lastSeq(); }, 10000));
  s = d.await("ledger_state_seq", static_cast<double>(ledger->lastSeq()));
  CHECK(reportSeries(s) == replayed(*ledger, ledger->lastSeq()));
  checkAgainstLedgerQuery(dir.path("ledger"), s);
  checkWithPromtool(scrapeText(d.daemon->listenPort()));
}

TEST_CASE(
    "live metrics: a QuotaExceeded finding opens and closes; usage equals a replay; a "
    "restart from a checkpoint shows the same",
    "[watch][live]") {
  TempDir dir;
  FakeApiServer server;
  cpuQueueCluster(server, "4");
  server.create("workloads", cpuWorkload("w1", "1500m"));
  server.start();
  auto ledger = openLedger(dir.path("ledger"));

  Series before;
  {
    Daemon d(*ledger, server);
    Series s = d.await(kReservedCpu, 1.5);
    CHECK(valueOf(s, kNominalCpu) == 4);
    CHECK(valueOf(s, kExceeded) == 0);
    CHECK(valueOf(s, "ledger_live_state_ok") == 1);
    for (const char* type : render::kFindingTypes) {
      INFO(type);
      CHECK(valueOf(s, std::string("ledger_open_findings{type=\"") + type +
                           "\",cluster_queue=\"team-a\"}") == 0);
    }

    // 1.5 + 3 reserved of a nominal 4, no cohort to borrow from.
    server.create("workloads", cpuWorkload("w2", "3"));
    s = d.await(kExceeded, 1);
    CHECK(valueOf(s, kReservedCpu) == 4.5);
    {
      const Series fresh =
          replayed(*ledger, static_cast<std::uint64_t>(valueOf(s, "ledger_state_seq")));
      CHECK(reportSeries(s) == fresh);
    }

    // Corrected: w2 finishes, its quota is released (Kueue releases a
    // finished workload's reservation).
    server.update("workloads", "team-a", "w2", [](Json& o) { o = finished(o); });
    s = d.await(kExceeded, 0);
    CHECK(valueOf(s, kReservedCpu) == 1.5);
    REQUIRE(FakeApiServer::waitFor([&] { return d.live->seq() == ledger->lastSeq(); }, 10000));
    s = d.await("ledger_state_seq", static_cast<double>(ledger->lastSeq()));
    before = reportSeries(s);
    CHECK(before == replayed(*ledger, ledger->lastSeq()));
    checkAgainstLedgerQuery(dir.path("ledger"), s);
    CHECK(valueOf(s, "ledger_last_record_age_seconds") >= 0);
  }

  SECTION("restart from the log") {
    Daemon d(*ledger, server);
    CHECK(reportSeries(d.scrape()) == before);
  }
  SECTION("restart from a checkpoint plus the records after it") {
    REQUIRE(replay::writeCheckpoints(*ledger, 3) >= 1);
    Daemon d(*ledger, server);
    CHECK(reportSeries(d.scrape()) == before);
    // And it goes on folding after the restore.
    server.create("workloads", cpuWorkload("w3", "3"));
    d.await(kExceeded, 1);
  }
}

TEST_CASE(
    "the daemon writes checkpoints and usage rollups as it records, and a restart restores from "
    "the newest",
    "[watch][live][upkeep]") {
  TempDir dir;
  FakeApiServer server;
  cpuQueueCluster(server, "100");
  server.start();
  auto ledger = openLedger(dir.path("ledger"));
  const cli::UpkeepOptions upkeep{5, 50ms};
  Series before;
  std::uint64_t newest = 0;
  {
    Daemon d(*ledger, server, kKueueResources, upkeep);
    for (int i = 0; i < 23; ++i) {
      server.create("workloads", cpuWorkload("w" + std::to_string(i), "1"));
    }
    d.await(kReservedCpu, 23);
    REQUIRE(FakeApiServer::waitFor([&] { return d.live->seq() == ledger->lastSeq(); }, 10000));
    const std::uint64_t last = ledger->lastSeq();
    REQUIRE(last >= 26);
    // Every checkpoint due (one per 5 records), written off the writer's thread.
    newest = last / 5 * 5;
    REQUIRE(FakeApiServer::waitFor([&] { return d.upkeep->checkpointSeq() == newest; }, 10000));
    Series s = d.await("ledger_checkpoint_seq", static_cast<double>(newest));
    // The chain checked up to the head.
    s = d.await("ledger_verified_seq", static_cast<double>(last));
    CHECK(valueOf(s, "ledger_verify_ok") == 1);
    CHECK(valueOf(s, "ledger_last_verify_age_seconds") >= 0);
    s = d.await("ledger_state_seq", static_cast<double>(last));
    before = reportSeries(s);
  }
  // The derived data as `ledger-replay verify` checks it.
  const replay::CheckpointVerification checkpoints = replay::verifyCheckpoints(*ledger);
  INFO(checkpoints.problem);
  CHECK(checkpoints.firstBadSeq == 0);
  CHECK(checkpoints.checked == newest / 5);
  const replay::RollupVerification rollups = replay::verifyUsageRollups(*ledger);
  INFO(rollups.problem);
  CHECK(rollups.firstBad.empty());
  // Hours are stored from the month of the first record to the last whole
  // hour before the head: none only within a month's first hour.
  std::int64_t firstNs = 0;
  REQUIRE(ledger->timeOf(1, &firstNs).isOk());
  const auto firstSec = static_cast<std::time_t>(firstNs / 1000000000);
  std::tm utc{};
  gmtime_r(&firstSec, &utc);
  if (utc.tm_mday != 1 || utc.tm_hour != 0) CHECK(replay::usageRollupCoverage(*ledger));
  VerifyReport log;
  REQUIRE(verifyLog(*ledger, &log).isOk());
  CHECK(log.ok());

  Daemon d(*ledger, server, kKueueResources, upkeep);
  CHECK(d.live->restoredFrom() == newest);
  CHECK(reportSeries(d.scrape()) == before);
}

TEST_CASE("the daemon's chain check finds a tampered record: ledger_verify_ok goes 0",
          "[watch][live][upkeep]") {
  TempDir dir;
  FakeApiServer server;
  cpuQueueCluster(server, "100");
  for (int i = 0; i < 4; ++i) server.create("workloads", cpuWorkload("w" + std::to_string(i), "1"));
  server.start();
  auto ledger = openLedger(dir.path("ledger"));
  const cli::UpkeepOptions upkeep{0, 50ms};
  {
    Daemon d(*ledger, server, kKueueResources, upkeep);
    Series s = d.awaitVerifiedHead(*ledger);
    CHECK(valueOf(s, "ledger_verify_ok") == 1);
    CHECK(s.count("ledger_checkpoint_seq") == 0);  // --checkpoint-every 0
    // Incremental: later records are checked from where the last check ended.
    const std::uint64_t checks = d.upkeep->verifications();
    server.create("workloads", cpuWorkload("w-late", "1"));
    d.await(kReservedCpu, 5);
    d.awaitVerifiedHead(*ledger);
    CHECK(d.upkeep->verifications() > checks);
  }
  // Each check is recorded beside the ledger, where answers read their
  // proof line (ledger/verification_record.h).
  std::optional<Verification> recorded;
  REQUIRE(readVerification(ledger->directory(), &recorded).isOk());
  REQUIRE(recorded.has_value());
  CHECK(recorded->ok);
  CHECK(recorded->scope == VerificationScope::kChain);
  CHECK(recorded->upToSeq == ledger->lastSeq());
  // One flipped byte in record 3 as stored (as tests/ledger/ledger_test.cpp
  // flips them): its chain hash no longer matches. The fold reads
  // projections, so the daemon still starts.
  std::string value;
  REQUIRE(ledger->getRaw(format::kLogFamily, format::seqKey(3), &value).isOk());
  value[40] ^= 0x01;
  REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(3), value).isOk());
  Daemon d(*ledger, server, kKueueResources, upkeep);
  const Series s = d.await("ledger_verify_ok", 0);
  CHECK(valueOf(s, "ledger_verified_seq") == 2);
  CHECK(d.upkeep->verifiedSeq() == 2);
  REQUIRE(FakeApiServer::waitFor(
      [&] {
        return readVerification(ledger->directory(), &recorded).isOk() && recorded && !recorded->ok;
      },
      10000));
  CHECK(recorded->failedSeq == 3);
  CHECK_FALSE(recorded->problem.empty());
  CHECK(recorded->scope == VerificationScope::kChain);
}
