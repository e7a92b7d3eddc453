// The sidecar daemon (ledger-ingest --watch) against a fake API server on
// 127.0.0.1: initial sync with paging, live events and bookmarks, absent
// APIs, resume from the ledger's cursor, 410 Gone with objects deleted and
// replaced during the gap, server restart, 500s, stalls, /metrics; and, with
// the real binary ($LEDGER_INGEST), SIGKILL mid-stream, SIGTERM during a
// burst, hostile objects (100k levels deep, NUL in a name) in the stream, and
// a full disk (a small tmpfs; skipped with a message where it cannot be
// mounted), checked with $LEDGER_REPLAY verify; and the checkpoints and
// chain checks the daemon keeps (--checkpoint-every, --verify-every).
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "ingest/kube/watch_daemon.h"
#include "ingest/kube/watch_decoder.h"
#include "ledger/verify.h"
#include "tests/ingest/fake_apiserver.h"
#include "tests/test_support.h"
#include "tests/tools/dra_cluster_fixture.h"

using namespace ledger;
using namespace ledger::testing;
using namespace std::chrono_literals;

namespace {

// How long the daemon may take to exit once signalled: the sanitizer builds
// run every thread several times slower.
template <typename Duration>
constexpr Duration reactionBound(Duration normal) {
  return kSanitizerBuild ? normal * 3 : normal;
}

// "w" + std::to_string(i), appended: GCC 12 at -O3 warns (-Wrestrict, a
// false positive) on operator+ of a literal and a temporary string.
std::string numbered(const char* prefix, std::size_t i) {
  std::string out = prefix;
  out += std::to_string(i);
  return out;
}

using Resource = FakeApiServer::Resource;

using ledger::testing::live::kClusterQueues;
using ledger::testing::live::kWorkloads;
const Resource kPods{"", "v1", "pods", "Pod", true};
const Resource kNamespaces{"", "v1", "namespaces", "Namespace", false};
const Resource kKueues{"kueue.openshift.io", "v1", "kueues", "Kueue", false};
const Resource kConfigMaps{"", "v1", "configmaps", "ConfigMap", true};
const char* kWorkloadId = "kueue.x-k8s.io/workloads";

Json object(const std::string& ns, const std::string& name) {
  Json m = {{"name", name}};
  if (!ns.empty()) m["namespace"] = ns;
  return {{"metadata", m}, {"spec", {{"note", name}}}};
}

kube::DaemonOptions daemonOptions(const FakeApiServer& server, const std::string& resources) {
  kube::DaemonOptions o;
  o.cluster = kube::serverUrlConfig(server.url());
  o.resources = kube::parseResources(resources);
  o.writer.batchRecords = 50;
  o.writer.flushInterval = 20ms;
  o.informer.pageSize = 2;
  o.informer.backoffInitial = 20ms;
  o.informer.backoffMax = 200ms;
  o.informer.idleTimeout = 1500ms;
  o.informer.absentRetry = 200ms;
  o.listen = "127.0.0.1:0";
  return o;
}

// The records of the cluster's objects: without the Snapshot objects that
// bracket each LIST (schema/observation.h).
std::vector<Record> clusterRecords(const Ledger& ledger) {
  std::vector<Record> out;
  for (auto& r : ledgerRecords(ledger)) {
    if (r.identity.kind != "Snapshot") out.push_back(std::move(r));
  }
  return out;
}

// One snapshot: its ADDED and MODIFIED records.
constexpr std::uint64_t kSnapshotRecords = 2;

void requireSound(const Ledger& ledger) {
  VerifyReport v;
  REQUIRE(verifyLog(ledger, &v).isOk());
  INFO(v.problem);
  REQUIRE(v.ok());
}

// Every (uid, resourceVersion, type) once.
void requireNoDuplicates(const std::vector<Record>& recs) {
  std::set<std::string> seen;
  for (const auto& r : recs) {
    const std::string k =
        r.identity.uid + "@" + r.identity.resourceVersion + "/" + eventTypeName(r.type);
    INFO(k);
    REQUIRE(seen.insert(k).second);
  }
}

std::string httpGet(int port, const std::string& path, int* status = nullptr) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  auto res = c.Get(path.c_str());
  if (!res) {
    if (status != nullptr) *status = 0;
    return {};
  }
  if (status != nullptr) *status = res->status;
  return res->body;
}

// Prometheus text -> {"name{labels}": value}; checks each family has a TYPE.
std::map<std::string, double> parseMetrics(const std::string& text) {
  std::map<std::string, double> out;
  std::set<std::string> typed;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      typed.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line[0] == '#') continue;
    const auto space = line.rfind(' ');
    REQUIRE(space != std::string::npos);
    const std::string series = line.substr(0, space);
    std::string family = series.substr(0, series.find('{'));
    // A histogram's series are its family's name with a suffix.
    for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
      if (typed.count(family) == 0 && family.ends_with(suffix)) {
        family.resize(family.size() - suffix.size());
      }
    }
    INFO(line);
    REQUIRE(typed.count(family) == 1);
    out[series] = std::stod(line.substr(space + 1));
  }
  return out;
}

double metric(const std::map<std::string, double>& m, const std::string& series) {
  auto it = m.find(series);
  return it == m.end() ? -1 : it->second;
}

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

pid_t spawnDaemon(const std::vector<std::string>& args, const std::string& logFile) {
  std::vector<std::string> all = {programFromEnv("LEDGER_INGEST")};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    int log = ::open(logFile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(devnull, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  REQUIRE(pid > 0);
  return pid;
}

// Waits for `pid` at most `timeoutMs`; -1 if it is still running.
int waitExit(pid_t pid, int timeoutMs) {
  int status = 0;
  const bool done =
      FakeApiServer::waitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeoutMs);
  if (!done) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> daemonArgs(const std::string& ledgerDir, const FakeApiServer& server,
                                    int port, const std::string& batch,
                                    const std::string& flushMs) {
  return {"--watch",
          "--ledger",
          ledgerDir,
          "--server",
          server.url(),
          "--resources",
          "workloads.kueue.x-k8s.io",
          "--listen",
          "127.0.0.1:" + std::to_string(port),
          "--batch",
          batch,
          "--flush-ms",
          flushMs,
          "--backoff-initial-ms",
          "20",
          "--backoff-max-ms",
          "200",
          "--log-format",
          "json"};
}

double scrape(int port, const std::string& series) {
  int status = 0;
  const std::string body = httpGet(port, "/metrics", &status);
  if (status != 200) return -1;
  return metric(parseMetrics(body), series);
}

}  // namespace

TEST_CASE("initial sync lists with paging, then records live events, bookmarks and late APIs",
          "[watch]") {
  TempDir dir;
  FakeApiServer server;
  for (const auto& r : {kWorkloads, kClusterQueues, kPods, kNamespaces, kConfigMaps}) {
    server.serve(r);
  }
  server.create("configmaps", object("kueue-system", "kueue-manager-config"));
  server.create("configmaps", object("kueue-system", "unrelated"));
  for (int i = 1; i <= 5; ++i) server.create("workloads", object("team-a", numbered("w", i)));
  for (int i = 1; i <= 3; ++i) server.create("pods", object("team-a", numbered("p", i)));
  server.create("namespaces", object("", "team-a"));
  server.create("namespaces", object("", "team-b"));
  server.create("clusterqueues", object("", "cq"));
  server.start();
  auto ledger = openLedger(dir.path("ledger"));
  auto options = daemonOptions(server, "default");
  options.resources.push_back(kube::configMapResource("kueue-system/kueue-manager-config"));
  kube::WatchDaemon daemon(*ledger, options);
  daemon.start();
  const int port = daemon.listenPort();
  REQUIRE(FakeApiServer::waitFor([&] { return daemon.metrics().ready(); }, 10000));
  int status = 0;
  httpGet(port, "/readyz", &status);
  CHECK(status == 200);
  CHECK(httpGet(port, "/healthz", &status) == "ok\n");
  CHECK(status == 200);
  // Ready once every resource is listed; the snapshot's closing record may
  // follow a moment later (slower appends under a sanitizer show it).
  CHECK(FakeApiServer::waitFor(
      [&] { return daemon.metrics().headSeq() == 12 + kSnapshotRecords; },  // one ConfigMap of two
      10000));
  CHECK(server.listRequests() >= 3 + 2 + 1 + 1);  // 5 workloads in pages of 2, ...
  CHECK(daemon.metrics().state("kueue.openshift.io/kueues") == kube::ResourceState::kAbsent);
  CHECK(daemon.metrics().state("resource.k8s.io/deviceclasses") == kube::ResourceState::kAbsent);

  server.create("workloads", object("team-a", "w6"));
  server.update("workloads", "team-a", "w1", [](Json& o) { o["spec"]["note"] = "changed"; });
  server.remove("workloads", "team-a", "w2");
  server.update("configmaps", "kueue-system", "unrelated", [](Json& o) {
    o["data"] = {{"a", "b"}};
  });
  server.update("configmaps", "kueue-system", "kueue-manager-config", [](Json& o) {
    o["data"] = {{"controller_manager_config.yaml", "x: 1"}};
  });
  REQUIRE(FakeApiServer::waitFor(
      [&] { return daemon.metrics().headSeq() == 16 + kSnapshotRecords; }, 10000));
  // A bookmark moves the cursor without a record (pods saw nothing newer).
  const std::uint64_t bookmarkRv = server.resourceVersion();
  server.sendBookmarks();
  REQUIRE(FakeApiServer::waitFor(
      [&] {
        Cursor c;
        return ledger->cursor("watch:core/pods", &c).isOk() &&
               c.resourceVersion == std::to_string(bookmarkRv);
      },
      10000));
  // An API that appears later is found on the next retry (its LIST is a
  // snapshot of its own).
  server.serve(kKueues);
  server.create("kueues", object("", "cluster"));
  REQUIRE(FakeApiServer::waitFor(
      [&] { return daemon.metrics().headSeq() == 17 + 2 * kSnapshotRecords; }, 10000));
  daemon.stop();

  requireSound(*ledger);
  const auto all = ledgerRecords(*ledger);
  REQUIRE(all.size() == 17 + 2 * kSnapshotRecords);
  // The first sync is one snapshot, and its Workloads come after every
  // other resource it lists.
  CHECK(all.front().identity.kind == "Snapshot");
  CHECK(all.front().type == EventType::kAdded);
  std::size_t firstWorkload = all.size(), lastOther = 0, closed = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].identity.kind == "Snapshot" && all[i].type == EventType::kModified) {
      closed = i;
      break;
    }
    if (all[i].identity.kind == "Workload") firstWorkload = std::min(firstWorkload, i);
    if (all[i].identity.kind != "Workload" && all[i].identity.kind != "Snapshot") lastOther = i;
  }
  CHECK(closed == 12 + 1);
  CHECK(lastOther < firstWorkload);
  const Json bracket = Json::parse(all[closed].objectJson);
  CHECK(bracket["status"]["firstSeq"] == 1);
  CHECK(bracket["status"]["lastSeq"] == 13);
  CHECK(bracket["status"]["gaps"].empty());
  CHECK(bracket["spec"]["reason"] == "first-sync");
  const auto recs = clusterRecords(*ledger);
  REQUIRE(recs.size() == 17);
  requireNoDuplicates(recs);
  std::map<std::string, int> byType;
  for (const auto& r : recs) ++byType[std::string(eventTypeName(r.type))];
  CHECK(byType["ADDED"] == 14);
  CHECK(byType["MODIFIED"] == 2);
  for (const auto& r : recs) {
    if (r.identity.kind == "ConfigMap") CHECK(r.identity.name == "kueue-manager-config");
  }
  CHECK(byType["DELETED"] == 1);
  // Built-in kinds arrive without apiVersion/kind in LIST items; they are filled in.
  const auto pod = std::find_if(recs.begin(), recs.end(),
                                [](const Record& r) { return r.identity.kind == "Pod"; });
  REQUIRE(pod != recs.end());
  CHECK(pod->identity.version == "v1");
  CHECK(Json::parse(pod->objectJson)["kind"] == "Pod");
  CHECK(recs.back().identity.kind == "Kueue");
}

TEST_CASE("restart resumes from the cursor; 410 relists and records DELETED for the gap",
          "[watch]") {
  TempDir dir;
  FakeApiServer server;
  server.serve(kWorkloads);
  for (const char* n : {"a", "b", "c"}) server.create("workloads", object("team-a", n));
  server.start();
  auto ledger = openLedger(dir.path("ledger"));
  const std::string resources = "workloads.kueue.x-k8s.io";
  {
    kube::WatchDaemon daemon(*ledger, daemonOptions(server, resources));
    daemon.start();
    REQUIRE(FakeApiServer::waitFor([&] { return daemon.metrics().ready(); }, 10000));
    server.create("workloads", object("team-a", "e"));
    REQUIRE(FakeApiServer::waitFor(
        [&] { return daemon.metrics().headSeq() == 4 + kSnapshotRecords; }, 10000));
    daemon.stop();
  }
  // While the daemon is down: one event it can resume to, then a gap that
  // compaction erases.
  server.create("workloads", object("team-a", "f"));
  {
    kube::WatchDaemon daemon(*ledger, daemonOptions(server, resources));
    daemon.start();
    REQUIRE(FakeApiServer::waitFor(
        [&] { return daemon.metrics().headSeq() == 5 + kSnapshotRecords; }, 10000));
    CHECK(daemon.metrics().relists(kWorkloadId) == 0);  // resumed, no LIST
    daemon.stop();
  }
  const std::string oldUidA = server.objects("workloads")[0]["metadata"]["uid"];
  server.remove("workloads", "team-a", "b");
  server.update("workloads", "team-a", "c", [](Json& o) { o["spec"]["note"] = "changed"; });
  server.create("workloads", object("team-a", "d"));
  server.remove("workloads", "team-a", "a");
  server.create("workloads", object("team-a", "a"));  // same name, new uid
  server.compact();
  std::uint64_t before = ledger->lastSeq();
  {
    kube::WatchDaemon daemon(*ledger, daemonOptions(server, resources));
    daemon.start();
    // DELETED b, MODIFIED c, ADDED d, DELETED a (old uid), ADDED a (new uid),
    // in a snapshot.
    REQUIRE(FakeApiServer::waitFor(
        [&] { return daemon.metrics().headSeq() == before + 5 + kSnapshotRecords; }, 10000));
    CHECK(daemon.metrics().relists(kWorkloadId) == 1);

    // 410 as an HTTP status this time, while the daemon runs.
    server.setExpiredAs(FakeApiServer::ExpiredAs::kHttp410);
    server.setStalled(true);
    server.remove("workloads", "team-a", "e");
    server.compact();
    server.dropWatches();
    server.setStalled(false);
    REQUIRE(FakeApiServer::waitFor(
        [&] { return daemon.metrics().headSeq() == before + 6 + 2 * kSnapshotRecords; }, 10000));
    CHECK(daemon.metrics().relists(kWorkloadId) == 2);
    // /metrics, parsed back.
    int status = 0;
    const auto m = parseMetrics(httpGet(daemon.listenPort(), "/metrics", &status));
    REQUIRE(status == 200);
    CHECK(metric(m, "ledger_records_appended_total{kind=\"Workload\"}") == 6);
    CHECK(metric(m, "ledger_relists_total{resource=\"kueue.x-k8s.io/workloads\"}") == 2);
    CHECK(metric(m,
                 "ledger_watch_restarts_total{resource=\"kueue.x-k8s.io/"
                 "workloads\",reason=\"expired\"}") >= 1);
    CHECK(metric(m, "ledger_head_seq") == static_cast<double>(before + 6 + 2 * kSnapshotRecords));
    CHECK(metric(m, "ledger_observation_gaps_total{resource=\"kueue.x-k8s.io/workloads\"}") == 2);
    CHECK(metric(m, "ledger_unobserved_seconds_total{resource=\"kueue.x-k8s.io/workloads\"}") > 0);
    CHECK(metric(m, "ledger_watch_synced{resource=\"kueue.x-k8s.io/workloads\"}") == 1);
    CHECK(metric(m, "ledger_stored_bytes") > 0);
    CHECK(metric(m, "ledger_ingest_lag_seconds") >= 0);
    CHECK(metric(m, "ledger_last_event_age_seconds{kind=\"Workload\"}") >= 0);
    daemon.stop();
  }
  requireSound(*ledger);
  // Three snapshots: the first sync (no gap), then a relist after each 410,
  // each recording the gap from the last moment the watch was known current.
  std::vector<Json> closings;
  for (const auto& r : ledgerRecords(*ledger)) {
    if (r.identity.kind == "Snapshot" && r.type == EventType::kModified)
      closings.push_back(Json::parse(r.objectJson));
  }
  REQUIRE(closings.size() == 3);
  CHECK(closings[0]["status"]["gaps"].empty());
  for (std::size_t i = 1; i < 3; ++i) {
    INFO(closings[i].dump());
    CHECK(closings[i]["spec"]["reason"] == "relist");
    const Json& gaps = closings[i]["status"]["gaps"];
    REQUIRE(gaps.size() == 1);
    CHECK(gaps[0]["resources"] == Json::array({kWorkloadId}));
    CHECK(gaps[0]["reason"].get<std::string>().find("410") != std::string::npos);
    CHECK(gaps[0]["from"].get<std::string>() < gaps[0]["to"].get<std::string>());
  }
  // The second daemon stopped cleanly: the gap starts at its stop, not at
  // its last record.
  CHECK(closings[1]["status"]["gaps"][0]["from"].get<std::string>() >
        closings[0]["status"]["completedAt"].get<std::string>());
  const auto recs = clusterRecords(*ledger);
  requireNoDuplicates(recs);
  // What a relist recorded says since when its resource was not observed.
  for (const auto& r : recs) {
    if (r.type != EventType::kModified || r.identity.name != "c") continue;
    const Json obj = Json::parse(r.objectJson);
    CHECK(obj["metadata"]["annotations"].contains("kueue-dra-ledger/unobserved-since"));
  }
  before -= kSnapshotRecords;  // the first sync's
  REQUIRE(recs.size() == before + 6);
  std::vector<std::string> gap;
  for (std::size_t i = before; i < recs.size(); ++i) {
    const auto& r = recs[i];
    gap.push_back(std::string(eventTypeName(r.type)) + " " + r.identity.name);
    if (r.type == EventType::kDeleted) {
      const Json obj = Json::parse(r.objectJson);
      CHECK(obj["metadata"]["annotations"].contains(kube::kSynthesizedAnnotation));
      if (r.identity.name == "a") CHECK(r.identity.uid == oldUidA);
    }
  }
  std::multiset<std::string> got(gap.begin(), gap.end() - 1);
  CHECK(got ==
        std::multiset<std::string>{"DELETED b", "MODIFIED c", "ADDED d", "DELETED a", "ADDED a"});
  CHECK(gap.back() == "DELETED e");
  // The replaced object's deletion comes before its new incarnation.
  auto delA = std::find(gap.begin(), gap.end(), "DELETED a");
  auto addA = std::find(gap.begin(), gap.end(), "ADDED a");
  CHECK(delA < addA);
  // The ledger's live view equals the server's objects.
  std::set<std::string> live;
  REQUIRE(ledger
              ->scanLive("kueue.x-k8s.io/Workload/",
                         [&](std::string_view k, const LiveObject& o) {
                           live.insert(std::string(k) + "@" + o.uid);
                         })
              .isOk());
  std::set<std::string> expected;
  for (const auto& o : server.objects("workloads")) {
    expected.insert("kueue.x-k8s.io/Workload/team-a/" + o["metadata"]["name"].get<std::string>() +
                    "@" + o["metadata"]["uid"].get<std::string>());
  }
  CHECK(live == expected);
}

TEST_CASE("server restart, 500s and stalls: reconnects and resumes from the last resourceVersion",
          "[watch]") {
  TempDir dir;
  FakeApiServer server;
  server.serve(kWorkloads);
  server.create("workloads", object("team-a", "w0"));
  server.start();
  const int apiPort = server.port();
  auto ledger = openLedger(dir.path("ledger"));
  kube::WatchDaemon daemon(*ledger, daemonOptions(server, "workloads.kueue.x-k8s.io"));
  daemon.start();
  REQUIRE(FakeApiServer::waitFor([&] { return daemon.metrics().ready(); }, 10000));
  auto& metrics = daemon.metrics();

  // The API server goes away and comes back; changes made meanwhile arrive.
  server.stop();
  server.create("workloads", object("team-a", "w1"));
  std::this_thread::sleep_for(100ms);  // a few failed reconnects
  server.start(apiPort);
  REQUIRE(FakeApiServer::waitFor([&] { return metrics.headSeq() == 2 + kSnapshotRecords; }, 10000));
  CHECK(metrics.restarts(kWorkloadId) >= 1);

  // 500s on reconnect: backoff, then resume.
  server.failRequests(3, 500, "watch");
  server.dropWatches();
  server.create("workloads", object("team-a", "w2"));
  REQUIRE(FakeApiServer::waitFor([&] { return metrics.headSeq() == 3 + kSnapshotRecords; }, 10000));

  // A stalled connection is cut after the idle timeout.
  const auto restartsBefore = metrics.restarts(kWorkloadId);
  server.setStalled(true);
  REQUIRE(FakeApiServer::waitFor([&] { return metrics.restarts(kWorkloadId) > restartsBefore; },
                                 10000));
  server.setStalled(false);
  server.create("workloads", object("team-a", "w3"));
  REQUIRE(FakeApiServer::waitFor([&] { return metrics.headSeq() == 4 + kSnapshotRecords; }, 10000));
  CHECK(metrics.relists(kWorkloadId) == 0);
  const auto m = parseMetrics(httpGet(daemon.listenPort(), "/metrics"));
  CHECK(
      metric(
          m,
          "ledger_watch_restarts_total{resource=\"kueue.x-k8s.io/workloads\",reason=\"stall\"}") >=
      1);
  CHECK(
      metric(
          m,
          "ledger_watch_restarts_total{resource=\"kueue.x-k8s.io/workloads\",reason=\"error\"}") >=
      1);
  CHECK(metric(m,
               "ledger_watch_restarts_total{resource=\"kueue.x-k8s.io/"
               "workloads\",reason=\"disconnect\"}") >= 1);
  daemon.stop();
  requireSound(*ledger);
  const auto recs = clusterRecords(*ledger);
  REQUIRE(recs.size() == 4);
  requireNoDuplicates(recs);
}

TEST_CASE("SIGKILL mid-stream: each restart resumes; nothing lost, nothing duplicated",
          "[watch][process]") {
  TempDir dir;
  FakeApiServer server;
  server.serve(kWorkloads);
  server.start();
  const std::string ledgerDir = dir.path("ledger");
  const std::string log = dir.path("daemon.log");
  const int port = freePort();
  const auto args = daemonArgs(ledgerDir, server, port, "20", "10");
  // First run: synced (the empty LIST) before the cluster starts changing.
  pid_t pid = spawnDaemon(args, log);
  REQUIRE(FakeApiServer::waitFor(
      [&] {
        int status = 0;
        httpGet(port, "/readyz", &status);
        return status == 200;
      },
      15000));
  constexpr int kChanges = 1200;
  std::atomic<bool> producing{true};
  std::thread producer([&] {
    for (int i = 0; i < kChanges; ++i) {
      const std::string name = numbered("w", i / 3);
      if (i % 3 == 0) {
        server.create("workloads", object("team-a", name));
      } else {
        server.update("workloads", "team-a", name, [i](Json& o) { o["spec"]["step"] = i; });
      }
      if (i % 4 == 0) std::this_thread::sleep_for(1ms);
    }
    producing = false;
  });
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> delayMs(60, 250);
  int kills = 0;
  for (int round = 0; round < 6; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs(rng)));
    if (kill(pid, SIGKILL) == 0) ++kills;
    waitpid(pid, nullptr, 0);
    pid = spawnDaemon(args, log);
  }
  producer.join();
  CHECK(kills == 6);
  REQUIRE(FakeApiServer::waitFor(
      [&] { return scrape(port, "ledger_head_seq") == kChanges + kSnapshotRecords; }, 20000));
  // The program's live state (tools/watch_command.cpp wires it): restored
  // from what the killed runs committed, then folded up to the head.
  REQUIRE(FakeApiServer::waitFor(
      [&] { return scrape(port, "ledger_state_seq") == kChanges + kSnapshotRecords; }, 10000));
  CHECK(scrape(port, "ledger_live_state_ok") == 1);
  kill(pid, SIGTERM);
  CHECK(waitExit(pid, 10000) == 0);

  auto ledger = openLedger(ledgerDir);
  requireSound(*ledger);
  const auto recs = clusterRecords(*ledger);
  REQUIRE(recs.size() == static_cast<std::size_t>(kChanges));
  requireNoDuplicates(recs);
  // In resourceVersion order, as the API server produced them.
  for (std::size_t i = 1; i < recs.size(); ++i) {
    REQUIRE(std::stoull(recs[i - 1].identity.resourceVersion) <
            std::stoull(recs[i].identity.resourceVersion));
  }
}

TEST_CASE("SIGTERM during a burst: everything received is committed; exit 0 in seconds",
          "[watch][process]") {
  TempDir dir;
  FakeApiServer server;
  server.serve(kWorkloads);
  server.start();
  const std::string ledgerDir = dir.path("ledger");
  const std::string log = dir.path("daemon.log");
  const int port = freePort();
  // Large batches and a long flush interval: much is pending when the signal comes.
  pid_t pid = spawnDaemon(daemonArgs(ledgerDir, server, port, "100000", "60000"), log);
  REQUIRE(FakeApiServer::waitFor(
      [&] {
        int status = 0;
        httpGet(port, "/readyz", &status);
        return status == 200;
      },
      15000));
  const std::string received =
      "ledger_watch_events_total{resource=\"kueue.x-k8s.io/workloads\",type=\"ADDED\"}";
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    for (int i = 0; i < 5000 && !stop; ++i)
      server.create("workloads", object("team-a", numbered("w", i)));
  });
  REQUIRE(FakeApiServer::waitFor([&] { return scrape(port, received) >= 300; }, 15000));
  const double acknowledged = scrape(port, received);
  const auto signalled = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  const int code = waitExit(pid, 10000);
  const auto took = std::chrono::steady_clock::now() - signalled;
  stop = true;
  producer.join();
  CHECK(code == 0);
  CHECK(took < reactionBound(5s));

  auto ledger = openLedger(ledgerDir);
  requireSound(*ledger);
  const auto recs = clusterRecords(*ledger);
  CHECK(static_cast<double>(recs.size()) >= acknowledged);
  requireNoDuplicates(recs);
  // A gapless prefix of what the server sent, in order.
  const auto all = server.objects("workloads");
  std::map<std::string, std::string> rvByName;
  for (const auto& o : all) rvByName[o["metadata"]["name"]] = o["metadata"]["resourceVersion"];
  for (std::size_t i = 0; i < recs.size(); ++i) {
    REQUIRE(recs[i].identity.name == numbered("w", i));
    REQUIRE(recs[i].identity.resourceVersion == rvByName[recs[i].identity.name]);
  }
  // --log-format json: every log line is a JSON object.
  std::ifstream in(log);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    INFO(line);
    const Json j = Json::parse(line, nullptr, false);
    REQUIRE(j.is_object());
    REQUIRE(j.contains("msg"));
  }
  CHECK(lines > 3);
}

TEST_CASE(
    "the daemon writes checkpoints every --checkpoint-every records and checks the chain; "
    "ledger-replay verify passes; a restart restores from the newest checkpoint",
    "[watch][process][upkeep]") {
  TempDir dir;
  FakeApiServer server;
  server.serve(kWorkloads);
  server.start();
  const std::string ledgerDir = dir.path("ledger");
  const std::string log = dir.path("daemon.log");
  const int port = freePort();
  std::vector<std::string> args = daemonArgs(ledgerDir, server, port, "5", "20");
  for (const char* a : {"--checkpoint-every", "10", "--verify-every", "1"}) args.push_back(a);
  pid_t pid = spawnDaemon(args, log);
  REQUIRE(FakeApiServer::waitFor(
      [&] {
        int status = 0;
        httpGet(port, "/readyz", &status);
        return status == 200;
      },
      15000));
  for (int i = 0; i < 34; ++i) server.create("workloads", object("team-a", numbered("w", i)));
  // 34 Workloads after the first sync's snapshot (2 records).
  REQUIRE(FakeApiServer::waitFor([&] { return scrape(port, "ledger_head_seq") == 36; }, 15000));
  REQUIRE(
      FakeApiServer::waitFor([&] { return scrape(port, "ledger_checkpoint_seq") == 30; }, 15000));
  // Checked once at start, then every second from where the last check ended.
  REQUIRE(FakeApiServer::waitFor([&] { return scrape(port, "ledger_verified_seq") == 36; }, 15000));
  CHECK(scrape(port, "ledger_verify_ok") == 1);
  // The volume's forecast (tools/watch/volume_forecast.h): every scrape
  // samples the volume, so by now there is a rate (+Inf when not growing).
  CHECK(scrape(port, "ledger_volume_available_bytes") > 0);
  CHECK(scrape(port, "ledger_volume_days_until_full") > 0);
  kill(pid, SIGTERM);
  REQUIRE(waitExit(pid, 10000) == 0);
  // The checkpoints and usage rollups as `ledger-replay verify` checks them.
  const auto verify =
      runCommand(programFromEnv("LEDGER_REPLAY") + " --ledger " + ledgerDir + " verify");
  INFO(verify.output);
  CHECK(verify.exitCode == 0);

  pid = spawnDaemon(args, log);
  const auto restored = [&] {
    std::ifstream in(log);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find("live state restored at seq 36 from the checkpoint at seq 30") !=
          std::string::npos)
        return true;
    }
    return false;
  };
  CHECK(FakeApiServer::waitFor(restored, 15000));
  kill(pid, SIGTERM);
  CHECK(waitExit(pid, 10000) == 0);
}

TEST_CASE(
    "--retain archives the records older than the retention into --archive-dir while watched "
    "changes go on being committed; verify --archive passes; --retain alone is refused",
    "[watch][process][upkeep][archive]") {
  TempDir dir;
  const std::string ledgerDir = dir.path("ledger");
  const std::string archiveDir = dir.path("archive");
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  {
    // The demo's history, weeks old: older than any retention of an hour.
    std::ofstream(dir.path("demo.jsonl")) << demoStream();
    const auto r =
        runCommand(ingest + " --ledger " + ledgerDir + " --from " + dir.path("demo.jsonl"));
    INFO(r.output);
    REQUIRE(r.exitCode == 0);
  }
  std::uint64_t demoRecords = 0;
  {
    Ledger::Options readOnly;
    readOnly.readOnly = true;
    demoRecords = openLedger(ledgerDir, readOnly)->lastSeq();
  }
  FakeApiServer server;
  server.serve(kWorkloads);
  server.start();
  const int port = freePort();
  std::vector<std::string> args = daemonArgs(ledgerDir, server, port, "5", "20");
  {
    std::vector<std::string> alone = args;
    for (const char* a : {"--retain", "1h"}) alone.push_back(a);
    const pid_t refused = spawnDaemon(alone, dir.path("refused.log"));
    CHECK(waitExit(refused, 10000) == 1);
  }
  for (const char* a : {"--checkpoint-every", "10", "--retain", "1h", "--archive-dir"}) {
    args.push_back(a);
  }
  args.push_back(archiveDir);
  const pid_t pid = spawnDaemon(args, dir.path("daemon.log"));
  REQUIRE(FakeApiServer::waitFor(
      [&] {
        int status = 0;
        httpGet(port, "/readyz", &status);
        return status == 200;
      },
      15000));
  // Changes keep coming while the upkeep archives (a round every 10
  // records): every one is committed, before, during and after the cut.
  int created = 0;
  const bool archived = FakeApiServer::waitFor(
      [&] {
        server.create("workloads", object("team-a", numbered("r", created++)));
        return scrape(port, "ledger_archive_last_seq") == static_cast<double>(demoRecords);
      },
      20000);
  CHECK(archived);
  for (int i = 0; i < 12; ++i)
    server.create("workloads", object("team-a", numbered("r", created++)));
  CHECK(scrape(port, "ledger_archive_last_time_seconds") > 0);
  // The Workloads created, each recorded once after the cut (read beside
  // the daemon, read-only).
  auto createdRecords = [&] {
    Ledger::Options readOnly;
    readOnly.readOnly = true;
    auto live = openLedger(ledgerDir, readOnly);
    int found = 0;
    REQUIRE(live->scanRecords(live->firstSeq(), 0,
                              [&](const Record& r, const Digest&) {
                                found +=
                                    r.type == EventType::kAdded && r.identity.name.starts_with("r")
                                        ? 1
                                        : 0;
                                return true;
                              })
                .isOk());
    return found;
  };
  CHECK(FakeApiServer::waitFor([&] { return createdRecords() == created; }, 15000));
  kill(pid, SIGTERM);
  REQUIRE(waitExit(pid, 10000) == 0);
  CHECK(createdRecords() == created);

  const std::string replay = programFromEnv("LEDGER_REPLAY");
  const auto verify =
      runCommand(replay + " --ledger " + ledgerDir + " verify -o table --archive " + archiveDir);
  INFO(verify.output);
  CHECK(verify.exitCode == 0);
  CHECK(verify.output.find("live ledger's link at seq " + std::to_string(demoRecords)) !=
        std::string::npos);
  Ledger::Options readOnly;
  readOnly.readOnly = true;
  auto live = openLedger(ledgerDir, readOnly);
  REQUIRE(live->archiveCut().has_value());
  CHECK(live->archiveCut()->seq == demoRecords);
}

namespace {

// A watch event line whose object holds `depth` nested arrays.
std::string deepEventLine(std::size_t depth) {
  return "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
         "\"kind\":\"Workload\",\"metadata\":{\"name\":\"deep\",\"namespace\":\"team-a\","
         "\"uid\":\"uid-deep\",\"resourceVersion\":\"1\"},\"spec\":" +
         std::string(depth, '[') + std::string(depth, ']') + "}}";
}

}  // namespace

TEST_CASE("the watch decoder rejects deep nesting and control characters in identities",
          "[watch][limits]") {
  const std::string gv = "kueue.x-k8s.io/v1beta2";
  auto deep = kube::decodeWatchLine(deepEventLine(100000), gv, "Workload");
  CHECK(deep.events.empty());
  REQUIRE(deep.rejected.size() == 1);
  CHECK(deep.rejected[0].find("JSON nested deeper than 1000 levels at byte ") == 0);
  CHECK(kube::decodeWatchLine(deepEventLine(900), gv, "Workload").events.size() == 1);
  const std::string nul =
      R"({"type":"ADDED","object":{"metadata":{"name":"w\u0000","namespace":"team-a",)"
      R"("uid":"u","resourceVersion":"7"}}})";
  auto named = kube::decodeWatchLine(nul, gv, "Workload");
  CHECK(named.events.empty());
  REQUIRE(named.rejected.size() == 1);
  CHECK(named.rejected[0] == "object's metadata.name holds the control character U+0000 at byte 1");
  auto garbage = kube::decodeWatchLine("not json", gv, "Workload");
  CHECK(garbage.rejected.size() == 1);
  CHECK(kube::decodeWatchLine("", gv, "Workload").rejected.empty());
}

TEST_CASE("an object 100k levels deep or with a NUL name is skipped; the daemon records on",
          "[watch][process][limits]") {
  TempDir dir;
  FakeApiServer server;
  server.serve(kWorkloads);
  server.create("workloads", object("team-a", "w0"));
  server.start();
  const std::string ledgerDir = dir.path("ledger");
  const std::string log = dir.path("daemon.log");
  const int port = freePort();
  pid_t pid = spawnDaemon(daemonArgs(ledgerDir, server, port, "20", "10"), log);
  REQUIRE(FakeApiServer::waitFor(
      [&] { return scrape(port, "ledger_head_seq") == 1 + kSnapshotRecords; }, 15000));
  // What a broken or hostile API server could send: each used to end the
  // process (stack overflow) and, resumed from the same cursor, again.
  server.sendRaw("workloads", deepEventLine(100000));
  server.sendRaw("workloads",
                 R"({"type":"ADDED","object":{"apiVersion":"kueue.x-k8s.io/v1beta2",)"
                 R"("kind":"Workload","metadata":{"name":"bad\u0000name","namespace":"team-a",)"
                 R"("uid":"uid-nul","resourceVersion":")" +
                     std::to_string(server.resourceVersion()) + R"("}}})");
  server.create("workloads", object("team-a", "w1"));
  REQUIRE(FakeApiServer::waitFor(
      [&] { return scrape(port, "ledger_head_seq") == 2 + kSnapshotRecords; }, 15000));
  CHECK(scrape(port, "ledger_watch_rejected_total{resource=\"kueue.x-k8s.io/workloads\"}") == 2);
  CHECK(waitpid(pid, nullptr, WNOHANG) == 0);  // still running
  kill(pid, SIGTERM);
  CHECK(waitExit(pid, 10000) == 0);
  auto ledger = openLedger(ledgerDir);
  requireSound(*ledger);
  const auto recs = clusterRecords(*ledger);
  REQUIRE(recs.size() == 2);
  CHECK(recs[1].identity.name == "w1");
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  CHECK(text.find("watch event skipped: JSON nested deeper than 1000 levels") != std::string::npos);
}

namespace {

// A Workload with a few KB of spec, so that a full disk shows in a few commits.
Json bulkyObject(int i) {
  Json o = object("team-a", numbered("w", static_cast<std::size_t>(i)));
  o["spec"]["payload"] = std::string(4000, static_cast<char>('a' + i % 26));
  return o;
}

// Writes `filler` until its file system has no byte left.
void fillDisk(const std::string& filler) {
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  REQUIRE(fd >= 0);
  const std::string block(1 << 16, 'x');
  for (std::size_t size = block.size(); size > 0; size /= 2) {
    while (::write(fd, block.data(), size) == static_cast<ssize_t>(size)) {
    }
  }
  ::close(fd);
}

int readyzStatus(int port) {
  int status = 0;
  httpGet(port, "/readyz", &status);
  return status;
}

// The daemon on a ledger in `disk`, retrying a full disk every 50 to 200 ms.
pid_t spawnOnSmallDisk(const std::string& ledgerDir, const FakeApiServer& server, int port,
                       const std::string& log) {
  auto args = daemonArgs(ledgerDir, server, port, "20", "10");
  for (const char* a : {"--disk-retry-initial-ms", "50", "--disk-retry-max-ms", "200"})
    args.push_back(a);
  return spawnDaemon(args, log);
}

// Creates bulky Workloads until the daemon reports the disk full on /readyz;
// how many were created.
int createUntilDiskFull(FakeApiServer& server, int port) {
  int created = 0;
  const bool full = FakeApiServer::waitFor(
      [&] {
        for (int i = 0; i < 5 && created < 4000; ++i)
          server.create("workloads", bulkyObject(created++));
        return readyzStatus(port) == 503;
      },
      30000);
  REQUIRE(full);
  return created;
}

// Records in order, once each, all `count` of them: verify passes (the
// program and the library's check).
void requireAllOnce(const std::string& ledgerDir, int count) {
  const CommandRun verify =
      runCommand(programFromEnv("LEDGER_REPLAY") + " --ledger " + ledgerDir + " verify");
  INFO(verify.output);
  CHECK(verify.exitCode == 0);
  auto ledger = openLedger(ledgerDir);
  requireSound(*ledger);
  const auto recs = clusterRecords(*ledger);
  REQUIRE(recs.size() == static_cast<std::size_t>(count));
  requireNoDuplicates(recs);
  for (std::size_t i = 0; i < recs.size(); ++i) REQUIRE(recs[i].identity.name == numbered("w", i));
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The daemon as a process on a 16 MiB tmpfs, ready, then its disk filled
// and Workloads created until it reports the disk full.
struct FullDiskDaemon {
  TempDir dir;
  SmallDisk disk{dir.path("small"), 16 << 20};
  FakeApiServer server;
  std::string ledgerDir = dir.path("small/ledger");
  std::string log = dir.path("daemon.log");
  std::string filler = dir.path("small/filler");
  int port = freePort();
  pid_t pid = -1;
  int created = 0;

  // False, with a warning, where no tmpfs can be mounted (the test skips).
  bool start() {
    if (!disk.mounted()) {
      WARN("skipped: cannot mount a tmpfs here (needs root, CAP_SYS_ADMIN)");
      return false;
    }
    server.serve(kWorkloads);
    server.start();
    pid = spawnOnSmallDisk(ledgerDir, server, port, log);
    REQUIRE(FakeApiServer::waitFor([&] { return readyzStatus(port) == 200; }, 15000));
    fillDisk(filler);
    created = createUntilDiskFull(server, port);
    return true;
  }
};

}  // namespace

TEST_CASE("a full disk: /readyz 503 naming it, /healthz 200, events held; freed: committed once",
          "[watch][process][disk-full]") {
  FullDiskDaemon d;
  if (!d.start()) return;

  int status = 0;
  CHECK(httpGet(d.port, "/readyz", &status).find("ledger: the disk is full") != std::string::npos);
  CHECK(httpGet(d.port, "/healthz", &status) == "ok\n");
  CHECK(status == 200);
  CHECK(scrape(d.port, "ledger_writes_blocked") == 1);
  // Retried, still running, and taking more events meanwhile.
  REQUIRE(FakeApiServer::waitFor([&] { return scrape(d.port, "ledger_write_failures_total") >= 3; },
                                 10000));
  for (int i = 0; i < 10; ++i) d.server.create("workloads", bulkyObject(d.created++));
  CHECK(waitpid(d.pid, nullptr, WNOHANG) == 0);
  CHECK(readyzStatus(d.port) == 503);

  std::filesystem::remove(d.filler);
  REQUIRE(FakeApiServer::waitFor(
      [&] {
        return readyzStatus(d.port) == 200 &&
               scrape(d.port, "ledger_head_seq") == d.created + kSnapshotRecords;
      },
      15000));
  CHECK(scrape(d.port, "ledger_writes_blocked") == 0);
  d.server.create("workloads", bulkyObject(d.created++));
  REQUIRE(FakeApiServer::waitFor(
      [&] { return scrape(d.port, "ledger_head_seq") == d.created + kSnapshotRecords; }, 10000));
  kill(d.pid, SIGTERM);
  CHECK(waitExit(d.pid, 10000) == 0);
  requireAllOnce(d.ledgerDir, d.created);
  // One line when commits start failing and one when they succeed, not one per retry.
  const std::string text = readText(d.log);
  CHECK(occurrences(text, "the disk is full: committing") == 1);
  CHECK(occurrences(text, "the disk has room again") == 1);
}

TEST_CASE("SIGTERM while the disk is full: exit 4 at once naming the events not committed",
          "[watch][process][disk-full]") {
  FullDiskDaemon d;
  if (!d.start()) return;
  const auto signalled = std::chrono::steady_clock::now();
  kill(d.pid, SIGTERM);
  CHECK(waitExit(d.pid, 10000) == 4);
  CHECK(std::chrono::steady_clock::now() - signalled < reactionBound(5s));
  CHECK(readText(d.log).find("received event(s) were not committed when the daemon stopped") !=
        std::string::npos);

  // With space again, a restart receives what was not committed, once.
  std::filesystem::remove(d.filler);
  d.pid = spawnOnSmallDisk(d.ledgerDir, d.server, d.port, d.log);
  REQUIRE(FakeApiServer::waitFor(
      [&] { return scrape(d.port, "ledger_head_seq") == d.created + kSnapshotRecords; }, 15000));
  kill(d.pid, SIGTERM);
  CHECK(waitExit(d.pid, 10000) == 0);
  requireAllOnce(d.ledgerDir, d.created);
}

TEST_CASE("a full disk with a small queue: the watch stops reading, drops nothing; stop is prompt",
          "[watch][disk-full]") {
  TempDir dir;
  SmallDisk disk(dir.path("small"), 16 << 20);
  if (!disk.mounted()) {
    WARN("skipped: cannot mount a tmpfs here (needs root, CAP_SYS_ADMIN)");
    return;
  }
  FakeApiServer server;
  server.serve(kWorkloads);
  server.start();
  const std::string ledgerDir = dir.path("small/ledger");
  auto options = daemonOptions(server, "workloads.kueue.x-k8s.io");
  options.writer.queueCapacity = 4;
  options.writer.retryInitial = 50ms;
  options.writer.retryMax = 200ms;
  int created = 0;
  {
    auto ledger = openLedger(ledgerDir);
    kube::WatchDaemon daemon(*ledger, options);
    daemon.start();
    REQUIRE(FakeApiServer::waitFor([&] { return daemon.metrics().ready(); }, 10000));
    fillDisk(dir.path("small/filler"));
    REQUIRE(FakeApiServer::waitFor(
        [&] {
          server.create("workloads", bulkyObject(created++));
          return daemon.metrics().writesBlocked();
        },
        30000));
    for (int i = 0; i < 200; ++i) server.create("workloads", bulkyObject(created++));
    // What the watch took in is bounded by the commit held, the queue, the
    // messages taken from it and the late events held to be put in order
    // (as many as the queue): it waits instead of reading on.
    const std::string received =
        "ledger_watch_events_total{resource=\"kueue.x-k8s.io/workloads\",type=\"ADDED\"}";
    std::this_thread::sleep_for(300ms);
    const double taken = metric(parseMetrics(daemon.metrics().render(0)), received);
    CHECK(taken <=
          static_cast<double>(daemon.metrics().headSeq() - kSnapshotRecords + 50 + 3 * 4 + 1));
    CHECK(taken < created);
    CHECK_FALSE(daemon.failed());
    const auto stopping = std::chrono::steady_clock::now();
    daemon.stop();
    CHECK(std::chrono::steady_clock::now() - stopping < reactionBound(5s));
    REQUIRE(daemon.failed());
    CHECK(daemon.failure().message().find("received event(s) were not committed") !=
          std::string::npos);
  }
  std::filesystem::remove(dir.path("small/filler"));
  {
    auto ledger = openLedger(ledgerDir);
    kube::WatchDaemon daemon(*ledger, options);
    daemon.start();
    REQUIRE(FakeApiServer::waitFor(
        [&] {
          return daemon.metrics().headSeq() ==
                 static_cast<std::uint64_t>(created) + kSnapshotRecords;
        },
        15000));
    daemon.stop();
    CHECK_FALSE(daemon.failed());
  }
  requireAllOnce(ledgerDir, created);
}

// A second daemon on a port another process listens on stops with exit 1
// before it creates anything: its ledger directory used to be created
// first, then the bind failed.
TEST_CASE("a daemon whose --listen port is taken exits 1 and creates no ledger", "[watch]") {
  TempDir dir;
  FakeApiServer server;
  server.serve(kWorkloads);
  server.start();
  const int port = freePort();
  const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  REQUIRE(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(holder, 1) == 0);
  const std::string ledgerDir = dir.path("second");
  const std::string log = dir.path("daemon.log");
  const pid_t pid = spawnDaemon(daemonArgs(ledgerDir, server, port, "10", "20"), log);
  CHECK(waitExit(pid, 10000) == 1);
  ::close(holder);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(text.find("cannot bind (in use?)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(ledgerDir));
}
