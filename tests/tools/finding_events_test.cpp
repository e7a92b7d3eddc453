// --emit-events (tools/finding_events.h, ingest/kube/event_poster.h) wired
// as tools/watch_command.cpp wires it, against the fake API server: a
// Workload finding that opens gets one Event on the Workload, no more while
// it stays open; another finding, and the same one reopened, get their own;
// a restarted daemon adds none (409 on the same name); without the flag
// nothing is posted; a ClusterQueue finding gets none; a 5xx is retried, a
// 403 given up and counted while the daemon keeps recording.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "ingest/kube/event_poster.h"
#include "ingest/kube/watch_daemon.h"
#include "tests/ingest/fake_apiserver.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tests/tools/dra_cluster_fixture.h"
#include "tools/finding_events.h"
#include "tools/live_state.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;
using namespace std::chrono_literals;

namespace {

using namespace ledger::testing::live;

struct EventsDaemon {
  std::unique_ptr<cli::LiveState> live;
  std::unique_ptr<kube::WatchDaemon> daemon;
  std::unique_ptr<kube::EventPoster> poster;
  std::unique_ptr<cli::FindingEvents> events;

  EventsDaemon(Ledger& ledger, const FakeApiServer& server, const std::string& resources,
               bool emitEvents) {
    live = std::make_unique<cli::LiveState>(ledger, 50ms);
    kube::DaemonOptions o;
    o.cluster = kube::serverUrlConfig(server.url());
    o.resources = kube::parseResources(resources);
    o.writer.flushInterval = 20ms;
    o.informer.backoffInitial = 20ms;
    o.informer.backoffMax = 200ms;
    o.listen = "127.0.0.1:0";
    cli::LiveState* l = live.get();
    o.writer.afterCommit = [l](std::uint64_t first, std::uint64_t last) {
      l->afterCommit(first, last);
    };
    o.extraMetrics = [l](std::int64_t nowNs) { return l->metricsText(nowNs); };
    daemon = std::make_unique<kube::WatchDaemon>(ledger, o);
    if (emitEvents) {  // as tools/watch_command.cpp, with short waits
      kube::EventPosterOptions eo;
      eo.backoffInitial = 20ms;
      eo.backoffMax = 100ms;
      poster = std::make_unique<kube::EventPoster>(o.cluster, daemon->metrics(), eo);
      events = std::make_unique<cli::FindingEvents>(*live, *poster, 50ms);
      poster->start();
      events->start();
    }
    daemon->start();
    REQUIRE(FakeApiServer::waitFor([&] { return daemon->metrics().ready(); }, 10000));
  }
  ~EventsDaemon() {
    daemon->stop();
    if (events) events->stop();
    if (poster) poster->stop();
  }

  // The value of an unlabelled series, or of `series` with its labels; -1 when absent.
  double metric(const std::string& series) {
    httplib::Client c("127.0.0.1", daemon->listenPort());
    c.set_read_timeout(5, 0);
    auto res = c.Get("/metrics");
    REQUIRE(res);
    std::istringstream in(res->body);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return -1;
  }
  void await(const std::string& series, double want) {
    double last = -1;
    const bool seen = FakeApiServer::waitFor(
        [&] {
          last = metric(series);
          return last == want;
        },
        10000);
    INFO(series << " wanted " << want << ", last " << last);
    REQUIRE(seen);
  }
  // Every commit folded and a report built from it (so its findings were
  // announced), then a few announcer ticks more.
  // The ledger's last seq is read inside the wait: a snapshot's closing record
  // may land between two reads.
  void settle(const Ledger& ledger) {
    double last = -1;
    const bool seen = FakeApiServer::waitFor(
        [&] {
          const auto seq = ledger.lastSeq();
          last = metric("ledger_state_seq");
          return live->seq() == seq && last == static_cast<double>(seq);
        },
        10000);
    INFO("ledger_state_seq last " << last << ", ledger at " << ledger.lastSeq());
    REQUIRE(seen);
    std::this_thread::sleep_for(300ms);
  }
};

std::string uidOf(const FakeApiServer& server, const std::string& name) {
  for (const auto& o : server.objects("workloads")) {
    if (o["metadata"]["name"] == name) return o["metadata"]["uid"];
  }
  FAIL("no workload " << name);
  return {};
}

// The message of the finding `type` on Workload ns/name in a fresh replay.
std::string findingMessage(const Ledger& ledger, const std::string& type, const std::string& ref) {
  std::string out;
  for (const auto& f : reportOf(ledger, ledger.lastSeq()).findings) {
    if (f.type == type && f.object == "Workload " + ref) out = f.message;
  }
  REQUIRE(!out.empty());
  return out;
}

std::vector<FakeApiServer::Json> withReason(const FakeApiServer& server,
                                            const std::string& reason) {
  std::vector<FakeApiServer::Json> out;
  for (const auto& e : server.events()) {
    if (e["reason"] == reason) out.push_back(e);
  }
  return out;
}

void checkEvent(const FakeApiServer::Json& e, const std::string& reason, const std::string& message,
                const std::string& uid) {
  INFO(e.dump());
  CHECK(e["metadata"]["namespace"] == "a");
  CHECK(std::regex_match(e["metadata"]["name"].get<std::string>(),
                         std::regex(R"(wl-ja\.[0-9a-f]{16})")));
  CHECK(e["involvedObject"] == FakeApiServer::Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                                   {"kind", "Workload"},
                                                   {"namespace", "a"},
                                                   {"name", "wl-ja"},
                                                   {"uid", uid}});
  CHECK(e["type"] == "Warning");
  CHECK(e["reason"] == reason);
  CHECK(e["message"] == message);
  CHECK(e["source"]["component"] == "kueue-dra-ledger");
  CHECK(e["reportingComponent"] == "kueue-dra-ledger");
}

const std::string kUncharged =
    "ledger_open_findings{type=\"UnchargedDRA\",cluster_queue=\"team-a\"}";
const std::string kMismatch =
    "ledger_open_findings{type=\"ChargeMismatch\",cluster_queue=\"team-a\"}";

}  // namespace

TEST_CASE(
    "--emit-events: one Event per finding opening on its Workload; none while it stays open; "
    "none again after a restart; none without the flag",
    "[watch][events]") {
  TempDir dir;
  FakeApiServer server;
  draCluster(server);
  server.start();
  auto ledger = openLedger(dir.path("ledger"));
  const std::string uid = uidOf(server, "wl-ja");
  int posts = 0;
  {
    EventsDaemon d(*ledger, server, kDraResources, true);
    d.settle(*ledger);
    CHECK(server.eventPosts() == 0);
    CHECK(d.metric("ledger_events_emitted_total") == 0);

    holdPartition(server);
    d.await(kUncharged, 1);
    REQUIRE(FakeApiServer::waitFor([&] { return server.events().size() == 1; }, 10000));
    const std::string uncharged = findingMessage(*ledger, "UnchargedDRA", "a/wl-ja");
    checkEvent(server.events()[0], "UnchargedDRA", uncharged, uid);
    d.await("ledger_events_emitted_total", 1);

    // More commits while it stays open: the pod changes, twice.
    for (const char* v : {"x", "y"}) {
      server.update("pods", "a", "ja-pod", [&](Json& o) { o["metadata"]["labels"]["v"] = v; });
    }
    d.settle(*ledger);
    CHECK(d.metric(kUncharged) == 1);
    CHECK(server.events().size() == 1);
    CHECK(server.eventPosts() == 1);

    // Charged after the fact: UnchargedDRA closes; ChargeMismatch opens (the
    // charge computed at the reservation, before the claim, has no gpu.memory).
    recordUsage(server, {{"cpu", "1"}, {"gpu.memory", "4864Mi"}});
    d.await(kUncharged, 0);
    REQUIRE(FakeApiServer::waitFor([&] { return server.events().size() == 2; }, 10000));
    REQUIRE(withReason(server, "ChargeMismatch").size() == 1);
    checkEvent(withReason(server, "ChargeMismatch")[0], "ChargeMismatch",
               findingMessage(*ledger, "ChargeMismatch", "a/wl-ja"), uid);

    // Back to uncharged: the same UnchargedDRA reopens, a new finding with
    // an Event of its own.
    recordUsage(server, {{"cpu", "1"}});
    d.await(kUncharged, 1);
    REQUIRE(FakeApiServer::waitFor([&] { return server.events().size() == 3; }, 10000));
    const auto reopened = withReason(server, "UnchargedDRA");
    REQUIRE(reopened.size() == 2);
    CHECK(reopened[0]["metadata"]["name"] != reopened[1]["metadata"]["name"]);
    for (const auto& e : reopened) checkEvent(e, "UnchargedDRA", uncharged, uid);
    d.settle(*ledger);
    CHECK(d.metric("ledger_events_emitted_total") == 3);
    CHECK(d.metric("ledger_events_failed_total") == 0);
    posts = server.eventPosts();
    CHECK(posts == 3);
  }

  SECTION("a restart posts the open finding again, under the same name: 409, no duplicate") {
    EventsDaemon d(*ledger, server, kDraResources, true);
    REQUIRE(FakeApiServer::waitFor([&] { return server.eventPosts() == posts + 1; }, 10000));
    d.await("ledger_events_emitted_total", 1);
    d.settle(*ledger);
    CHECK(server.events().size() == 3);
    CHECK(server.eventPosts() == posts + 1);
    CHECK(d.metric("ledger_events_failed_total") == 0);
  }
  SECTION("without --emit-events nothing is posted") {
    EventsDaemon d(*ledger, server, kDraResources, false);
    recordUsage(server, {{"cpu", "3"}});
    d.await(kMismatch, 1);
    d.settle(*ledger);
    CHECK(server.eventPosts() == posts);
    CHECK(d.metric("ledger_events_emitted_total") == 0);
  }
}

TEST_CASE(
    "--emit-events: a ClusterQueue finding gets no Event; a 5xx is retried; a 403 is given up, "
    "counted, and the daemon keeps recording",
    "[watch][events]") {
  TempDir dir;
  FakeApiServer server;
  cpuQueueCluster(server, "2", "a");
  // Requests 1 cpu, recorded 3: ChargeMismatch on the Workload, and 3 of a
  // nominal 2 reserved: QuotaExceeded on the ClusterQueue.
  auto overcharged = [](const std::string& name) {
    return admitted(workload("a", name, "lq", Json::array({podSet("main", 1, kPodSpec)})), "team-a",
                    "default", {{"cpu", "3"}});
  };
  server.create("workloads", overcharged("wl-ja"));
  const std::string exceeded =
      "ledger_open_findings{type=\"QuotaExceeded\",cluster_queue=\"team-a\"}";
  auto ledger = openLedger(dir.path("ledger"));

  SECTION("5xx retried") {
    server.failRequests(2, 503, "events");
    server.start();
    EventsDaemon d(*ledger, server, kKueueResources, true);
    d.await(exceeded, 1);
    d.await("ledger_events_emitted_total", 1);
    d.settle(*ledger);
    CHECK(server.eventPosts() == 3);
    REQUIRE(server.events().size() == 1);
    checkEvent(server.events()[0], "ChargeMismatch",
               findingMessage(*ledger, "ChargeMismatch", "a/wl-ja"), uidOf(server, "wl-ja"));
    CHECK(d.metric(exceeded) == 1);  // still open, and no Event for it
  }
  SECTION("403 given up") {
    server.failRequests(1000, 403, "events");
    server.start();
    EventsDaemon d(*ledger, server, kKueueResources, true);
    d.await("ledger_events_failed_total", 1);
    const std::uint64_t seq = ledger->lastSeq();
    server.create("workloads", overcharged("wl-jb"));
    d.await(kMismatch, 2);  // recorded and folded meanwhile
    CHECK(ledger->lastSeq() > seq);
    d.await("ledger_events_failed_total", 2);
    d.settle(*ledger);
    CHECK(server.eventPosts() == 2);  // not retried
    CHECK(server.events().empty());
    CHECK(d.metric("ledger_events_emitted_total") == 0);
    CHECK(d.daemon->metrics().ready());
  }
}

TEST_CASE(
    "--emit-events: an Event's name is the same for the same opening of a finding, another for "
    "any other, and a valid object name for the longest Workload name",
    "[watch][events]") {
  const std::string a = cli::findingEventName("wl", "uid-1", "UnchargedDRA", "holds mig-a", 0);
  CHECK(std::regex_match(a, std::regex(R"(wl\.[0-9a-f]{16})")));
  CHECK(a == cli::findingEventName("wl", "uid-1", "UnchargedDRA", "holds mig-a", 0));
  CHECK(a != cli::findingEventName("wl", "uid-1", "UnchargedDRA", "holds mig-a", 1));
  CHECK(a != cli::findingEventName("wl", "uid-2", "UnchargedDRA", "holds mig-a", 0));
  CHECK(a != cli::findingEventName("wl", "uid-1", "ChargeMismatch", "holds mig-a", 0));
  CHECK(a != cli::findingEventName("wl", "uid-1", "UnchargedDRA", "holds mig-b", 0));
  // The separators keep the parts apart: ("ab", "c") is not ("a", "bc").
  CHECK(cli::findingEventName("wl", "uid", "ab", "c", 0) !=
        cli::findingEventName("wl", "uid", "a", "bc", 0));
  // 253 characters, cut where a '-' would end up before the '.'.
  const std::string longName = std::string(235, 'a') + "-" + std::string(17, 'b');
  const std::string cut = cli::findingEventName(longName, "u", "T", "m", 0);
  CHECK(cut.size() <= 253);
  CHECK(std::regex_match(cut, std::regex(R"(a{235}\.[0-9a-f]{16})")));
}
