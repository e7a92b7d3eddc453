// The sidecar on a cluster that was running before it (docs/reference.md
// "Observation"), against the fake API server answering as a real one does
// where it matters here: LISTs of the charge inputs answered late, 410 after
// compaction, a watch resumed after downtime delivering its backlog with the
// objects' own times, and a first LIST of 100,000 Pods.
//
// Each scenario of tests/scenarios, the shared acceptance scenarios (when a
// shared/ folder sits beside the checkout) and the demo stream is audited
// twice: from its event files, and by a daemon started on the final state
// those files leave; the two audits must agree (workloads' computed charge
// and errors, findings but ChargeDrift: only history can show a drift).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "ingest/kube/watch_daemon.h"
#include "schema/k8s/rfc3339.h"
#include "tests/ingest/fake_apiserver.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tests/tools/dra_cluster_fixture.h"

using namespace ledger;
using namespace ledger::testing;
using namespace std::chrono_literals;

namespace observation_test {

using Resource = FakeApiServer::Resource;

// Kinds a cluster serves, as the daemon's default resources name them.
struct Served {
  const char* kind;
  const char* group;
  const char* plural;
  bool namespaced;
};
constexpr Served kServed[] = {
    {"ClusterQueue", "kueue.x-k8s.io", "clusterqueues", false},
    {"LocalQueue", "kueue.x-k8s.io", "localqueues", true},
    {"ResourceFlavor", "kueue.x-k8s.io", "resourceflavors", false},
    {"Workload", "kueue.x-k8s.io", "workloads", true},
    {"Cohort", "kueue.x-k8s.io", "cohorts", false},
    {"DeviceClass", "resource.k8s.io", "deviceclasses", false},
    {"ResourceSlice", "resource.k8s.io", "resourceslices", false},
    {"ResourceClaim", "resource.k8s.io", "resourceclaims", true},
    {"ResourceClaimTemplate", "resource.k8s.io", "resourceclaimtemplates", true},
    {"Pod", "", "pods", true},
    {"Namespace", "", "namespaces", false},
    {"ConfigMap", "", "configmaps", true},
    {"Kueue", "kueue.openshift.io", "kueues", false},
};

const Served* servedKind(const std::string& kind) {
  for (const auto& s : kServed) {
    if (kind == s.kind) return &s;
  }
  return nullptr;
}

// The charge inputs whose LISTs come back late.
const char* kSlowPlurals[] = {"deviceclasses", "resourceclaimtemplates", "resourceslices",
                              "configmaps", "kueues"};

kube::DaemonOptions sidecarOptions(const FakeApiServer& server) {
  kube::DaemonOptions o;
  o.cluster = kube::serverUrlConfig(server.url());
  o.resources = kube::defaultResources();
  o.resources.push_back(kube::configMapResource("kueue-system/kueue-manager-config"));
  o.writer.flushInterval = 20ms;
  o.informer.backoffInitial = 20ms;
  o.informer.backoffMax = 200ms;
  o.informer.absentRetry = 200ms;
  o.listen = "127.0.0.1:0";
  return o;
}

std::size_t snapshotsClosed(const Ledger& ledger) {
  std::size_t n = 0;
  for (const auto& r : ledgerRecords(ledger)) {
    n += r.identity.kind == "Snapshot" && r.type == EventType::kModified ? 1 : 0;
  }
  return n;
}

// The objects a ledger holds live at its end, in the order last recorded.
std::vector<Json> finalObjects(const Ledger& ledger) {
  std::map<std::string, std::pair<std::uint64_t, Json>> live;
  for (const auto& r : ledgerRecords(ledger)) {
    const std::string key = r.identity.objectKey();
    if (r.type == EventType::kDeleted) {
      live.erase(key);
    } else {
      live[key] = {r.seq, Json::parse(r.objectJson)};
    }
  }
  std::vector<std::pair<std::uint64_t, Json>> ordered;
  for (auto& [k, v] : live) ordered.push_back(std::move(v));
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Json> out;
  for (auto& [seq, obj] : ordered) out.push_back(std::move(obj));
  return out;
}

// A program's JSON answer (stdout alone: warnings go to stderr).
Json programJson(const std::string& command, const std::string& outFile) {
  const auto run = runCommand(command + " > " + outFile);
  INFO(command << "\n" << run.output);
  REQUIRE(run.exitCode == 0);
  std::ifstream in(outFile);
  return Json::parse(in);
}

Json replayJson(const std::string& ledgerDir) {
  return programJson(programFromEnv("LEDGER_REPLAY") + " --ledger " + ledgerDir + " -o json",
                     ledgerDir + ".replay.json");
}

// What the two audits must agree on.
struct Audit {
  std::map<std::string, std::string> workloads;  // ns/name -> computed and errors
  std::set<std::string> findings;                // type, object, message; no ChargeDrift
};

// `drifted`: the workloads whose charge inputs changed after their
// reservation, by the full history (its audit's `current`). A snapshot sees
// only today's inputs: their findings are history's to show, as ChargeDrift.
Audit auditOf(const std::string& ledgerDir, std::set<std::string>* drifted) {
  const Json report = replayJson(ledgerDir);
  Audit a;
  for (const auto& w : report["workloads"]) {
    const std::string key = w["namespace"].get<std::string>() + "/" + w["name"].get<std::string>();
    // A charge input changed after the reservation: the full history judges
    // the reservation's state, a snapshot only knows today's (`current`).
    const Json& judged = w.contains("current") ? w["current"] : w;
    a.workloads[key] = judged["computed"].dump() + " errors " + judged["errors"].dump();
    if (w.contains("current")) drifted->insert("Workload " + key);
  }
  for (const auto& f : report["findings"]) {
    const std::string type = f["type"];
    const std::string object = f["object"];
    if (type == "ChargeDrift" || drifted->count(object) != 0) continue;
    // The daemon watches the one ConfigMap Kueue reads, never a tenant's.
    if (object.rfind("ConfigMap ", 0) == 0 &&
        object != "ConfigMap kueue-system/kueue-manager-config")
      continue;
    a.findings.insert(type + " | " + object + " | " + f["message"].get<std::string>());
  }
  return a;
}

// The scenario's event files, in order (expect.json "ingest").
std::vector<std::string> ingestFiles(const std::filesystem::path& dir) {
  std::ifstream in(dir / "expect.json");
  const Json expect = Json::parse(in);
  std::vector<std::string> files;
  for (const auto& f : expect.value("ingest", Json::array({"events.jsonl"})))
    files.push_back((dir / f.get<std::string>()).string());
  return files;
}

struct Case {
  std::string name;
  std::vector<std::string> files;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::filesystem::path source = LEDGER_SOURCE_DIR;
  for (const auto& root :
       {source / "tests" / "scenarios", source / ".." / "shared" / "scenarios"}) {
    if (!std::filesystem::is_directory(root)) continue;
    std::vector<std::filesystem::path> dirs;
    for (const auto& e : std::filesystem::directory_iterator(root)) {
      if (std::filesystem::exists(e.path() / "expect.json")) dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) out.push_back({d.filename().string(), ingestFiles(d)});
  }
  out.push_back({"demo", {(source / "tools" / "demo" / "cluster-events.jsonl").string()}});
  return out;
}

// Loads `objects` into `server`, serving each kind at its object's version
// (kinds the daemon does not watch, a Job or a Node, are left out). False
// when the state holds a bare Kueue Configuration file: no cluster serves
// it, so such a scenario has no running cluster to start on.
bool loadCluster(FakeApiServer& server, const std::vector<Json>& objects) {
  std::set<std::string> served;
  for (const auto& o : objects) {
    if (o.value("kind", "") == "Configuration") return false;
    const Served* s = servedKind(o.value("kind", ""));
    if (s == nullptr) continue;
    const std::string apiVersion = o["apiVersion"];
    const std::string version = apiVersion.substr(apiVersion.find('/') + 1);
    if (served.insert(s->plural).second) {
      server.serve(Resource{s->group, version, s->plural, s->kind, s->namespaced});
    }
    server.create(s->plural, o);
  }
  return true;
}

}  // namespace observation_test

using namespace observation_test;

TEST_CASE(
    "a daemon started on a running cluster audits it as its full history does, the charge "
    "inputs' LISTs answered late",
    "[watch][observation]") {
  std::size_t compared = 0;
  for (const Case& c : cases()) {
    INFO("scenario " << c.name);
    TempDir dir;
    const std::string fromFiles = dir.path("files");
    std::string args;
    for (const auto& f : c.files) {
      const auto run = runCommand(programFromEnv("LEDGER_INGEST") + " --ledger " + fromFiles +
                                  " --from " + f + " -o json");
      INFO(run.output);
      REQUIRE(run.exitCode <= 2);
    }
    std::vector<Json> objects;
    {
      auto ledger = openLedger(fromFiles);
      objects = finalObjects(*ledger);
    }
    FakeApiServer server;
    if (!loadCluster(server, objects)) {
      WARN(c.name << ": skipped, its state holds an object no cluster serves");
      continue;
    }
    for (const char* plural : kSlowPlurals) server.setListDelay(plural, 1500ms);
    server.start();
    const std::string fromCluster = dir.path("cluster");
    {
      auto ledger = openLedger(fromCluster);
      kube::WatchDaemon daemon(*ledger, sidecarOptions(server));
      daemon.start();
      REQUIRE(FakeApiServer::waitFor(
          [&] { return daemon.metrics().ready() && snapshotsClosed(*ledger) >= 1; }, 20000));
      daemon.stop();
      REQUIRE_FALSE(daemon.failed());
    }
    std::set<std::string> drifted, none;
    const Audit files = auditOf(fromFiles, &drifted);
    Audit cluster = auditOf(fromCluster, &none);
    std::erase_if(cluster.findings, [&](const std::string& f) {
      for (const auto& d : drifted) {
        if (f.find(" | " + d + " | ") != std::string::npos) return true;
      }
      return false;
    });
    CHECK(cluster.workloads == files.workloads);
    CHECK(cluster.findings == files.findings);
    // Reserved before the ledger saw them: judged on the snapshot.
    const Json report = replayJson(fromCluster);
    for (const auto& w : report["workloads"]) {
      if (w["state"] == "Admitted" || w["state"] == "QuotaReserved") {
        INFO(w.dump());
        CHECK(w["computedAt"]["basis"] == "snapshot");
      }
    }
    ++compared;
  }
  CHECK(compared >= 8);
}

namespace observation_test {

// A small running cluster: ClusterQueue team-a with 10 cpu, one Workload
// holding 1 cpu since `reservedAt`.
void runningCluster(FakeApiServer& server, const std::string& reservedAt) {
  for (const Resource& r :
       {live::kFlavors, live::kClusterQueues, live::kLocalQueues, live::kWorkloads}) {
    server.serve(r);
  }
  server.create("resourceflavors", k8s::resourceFlavor("default"));
  server.create("clusterqueues",
                k8s::clusterQueue("team-a", "v1beta2", "", {{"default", {{"cpu", 10}}}}));
  server.create("localqueues", k8s::localQueue("a", "lq", "team-a"));
  Json wl = k8s::admitted(
      k8s::workload("a", "wl-1", "lq", Json::array({k8s::podSet("main", 1, live::kPodSpec)})),
      "team-a", "default", {{"cpu", "1"}});
  for (auto& c : wl["status"]["conditions"]) c["lastTransitionTime"] = reservedAt;
  server.create("workloads", wl);
}

kube::DaemonOptions kueueDaemon(const FakeApiServer& server) {
  kube::DaemonOptions o = sidecarOptions(server);
  o.resources = kube::parseResources(live::kKueueResources);
  return o;
}

// Runs a daemon on `ledgerDir` until `snapshots` snapshots are closed and
// `done` holds, then stops it.
void runDaemon(const std::string& ledgerDir, const FakeApiServer& server, std::size_t snapshots,
               const std::function<bool(const Ledger&)>& done = nullptr) {
  auto ledger = openLedger(ledgerDir);
  kube::WatchDaemon daemon(*ledger, kueueDaemon(server));
  daemon.start();
  REQUIRE(FakeApiServer::waitFor(
      [&] {
        return daemon.metrics().ready() && snapshotsClosed(*ledger) >= snapshots &&
               (!done || done(*ledger));
      },
      20000));
  daemon.stop();
  REQUIRE_FALSE(daemon.failed());
}

// The wall clock as the API server writes it (whole seconds).
std::string serverTime(std::chrono::system_clock::time_point t = std::chrono::system_clock::now()) {
  return formatRfc3339(
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count() *
      1'000'000'000LL);
}

std::int64_t parseTime(const std::string& text) { return *tryParseRfc3339(text); }

std::int64_t timeOfSeq(const std::string& ledgerDir, std::uint64_t seq) {
  auto ledger = openLedger(ledgerDir);
  std::int64_t t = 0;
  REQUIRE(ledger->timeOf(seq == 0 ? ledger->lastSeq() : seq, &t).isOk());
  return t;
}

CommandRun query(const std::string& ledgerDir, const std::string& args) {
  return runCommand(programFromEnv("LEDGER_QUERY") + " --ledger " + ledgerDir + " " + args);
}

Json queryJson(const std::string& ledgerDir, const std::string& args) {
  return programJson(
      programFromEnv("LEDGER_QUERY") + " --ledger " + ledgerDir + " " + args + " -o json",
      ledgerDir + ".query.json");
}

// Whether some record of `name` carries the condition `type`.
bool recordedCondition(const std::vector<Record>& recs, const std::string& name,
                       const std::string& type) {
  for (const auto& r : recs) {
    if (r.identity.name != name) continue;
    const Json obj = Json::parse(r.objectJson);
    for (const auto& c : obj["status"]["conditions"]) {
      if (c["type"] == type) return true;
    }
  }
  return false;
}

}  // namespace observation_test

TEST_CASE(
    "an outage the watch cannot resume (410): the relist records a gap spanning it; report, "
    "usage and workload name it; a moment before the first record is exit 1",
    "[watch][observation]") {
  TempDir dir;
  FakeApiServer server;
  runningCluster(server, "2026-11-30T08:00:00Z");
  server.start();
  const std::string ledgerDir = dir.path("ledger");
  runDaemon(ledgerDir, server, 1);
  const auto stopped = std::chrono::system_clock::now();
  // While the daemon is down the workload finishes, and the server compacts
  // its history: the watch cannot resume.
  server.update("workloads", "a", "wl-1", [](Json& o) { o = k8s::finished(o); });
  server.compact();
  std::this_thread::sleep_for(1500ms);
  // Every watch expired: each relists (a watch that answers 200 before its
  // 410 may do so after the others' snapshot closed).
  runDaemon(ledgerDir, server, 2, [](const Ledger& l) {
    std::size_t opened = 0, closed = 0, relisted = 0;
    for (const auto& r : ledgerRecords(l)) {
      if (r.identity.kind != "Snapshot") continue;
      (r.type == EventType::kAdded ? opened : closed) += 1;
      if (r.type == EventType::kModified) {
        relisted += Json::parse(r.objectJson)["status"]["resources"].size();
      }
    }
    return opened == closed && relisted == 4 + 4;
  });

  const std::int64_t first = timeOfSeq(ledgerDir, 1);
  const std::int64_t last = timeOfSeq(ledgerDir, 0);
  const std::string period =
      " --from " + formatRfc3339(first) + " --to " + formatRfc3339(last + 1'000'000'000LL);
  const Json report = queryJson(ledgerDir, "report" + period);
  INFO(report.dump());
  CHECK(report["coverage"]["observedFrom"] == formatRfc3339(first));
  REQUIRE(report["coverage"]["gaps"].size() == 1);
  const Json& gap = report["coverage"]["gaps"][0];
  // Every watch expired: one gap, from the daemon's stop, for all of them.
  CHECK(gap["resources"].size() == 4);
  CHECK(std::find(gap["resources"].begin(), gap["resources"].end(), "kueue.x-k8s.io/workloads") !=
        gap["resources"].end());
  CHECK(gap["reason"].get<std::string>().find("410") != std::string::npos);
  // From the clean stop to the relist.
  const std::int64_t stopNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(stopped.time_since_epoch()).count();
  CHECK(std::llabs(parseTime(gap["from"]) - stopNs) < 1'000'000'000LL);
  CHECK(parseTime(gap["to"]) - parseTime(gap["from"]) >= 1'400'000'000LL);
  const auto table = query(ledgerDir, "report -o table" + period);
  CHECK(table.output.find("warning: the ledger did not observe kueue.x-k8s.io/") !=
        std::string::npos);
  const Json series = queryJson(ledgerDir, "usage --step 1s" + period);
  CHECK(series["coverage"]["gaps"].size() == 1);

  // The workload's history: reserved before the ledger, finished in the gap.
  const auto history = query(ledgerDir, "workload a/wl-1 -o table");
  INFO(history.output);
  CHECK(history.output.find("already reserved since 2026-11-30T08:00:00Z (before the ledger)") !=
        std::string::npos);
  // Between the stop and the end of the workloads' own relist: the report's
  // gap spans every resource's, which may relist a little later when its
  // watch expired after the others' snapshot closed.
  const std::string between = "happened between " + gap["from"].get<std::string>() + " and ";
  const auto at = history.output.find(between);
  REQUIRE(at != std::string::npos);
  const std::string end = history.output.substr(
      at + between.size(), history.output.find(' ', at + between.size()) - at - between.size());
  INFO(end);
  CHECK(parseTime(end) > parseTime(gap["from"]));
  CHECK(parseTime(end) <= parseTime(gap["to"]));

  // A moment before the first record is no moment of the ledger's; one in
  // the gap is answered with a warning.
  const auto before = query(ledgerDir, "state --at 2026-01-01T00:00:00Z");
  CHECK(before.exitCode == 1);
  CHECK(before.output.find("is before the ledger's first record") != std::string::npos);
  const std::int64_t inGap = (parseTime(gap["from"]) + parseTime(gap["to"])) / 2;
  const auto during = query(ledgerDir, "state -o json --at " + formatRfc3339(inGap));
  CHECK(during.exitCode == 0);
  CHECK(during.output.find("warning: this moment is in a gap") != std::string::npos);
}

TEST_CASE(
    "an outage the watch resumes: the backlog is stamped with the objects' own times, and the "
    "report integrates as the full history's would",
    "[watch][observation]") {
  TempDir dir;
  FakeApiServer server;
  runningCluster(server, "2026-11-30T08:00:00Z");
  server.start();
  const std::string ledgerDir = dir.path("ledger");
  runDaemon(ledgerDir, server, 1);
  std::this_thread::sleep_for(1200ms);
  // The workload finishes while the daemon is down, then it stays down a while.
  const std::string finishedAt = serverTime();
  server.update("workloads", "a", "wl-1", [&](Json& o) {
    o = k8s::finished(o);
    for (auto& c : o["status"]["conditions"]) {
      if (c["type"] == "Finished") c["lastTransitionTime"] = finishedAt;
    }
  });
  std::this_thread::sleep_for(2500ms);
  const std::int64_t restarted = nowNs();
  runDaemon(ledgerDir, server, 1, [](const Ledger& l) {
    return recordedCondition(ledgerRecords(l), "wl-1", "Finished");
  });

  auto ledger = openLedger(ledgerDir);
  const auto recs = ledgerRecords(*ledger);
  ledger.reset();
  const Record* finished = nullptr;
  const Record* firstOfWorkload = nullptr;
  for (const auto& r : recs) {
    if (r.identity.name != "wl-1") continue;
    if (firstOfWorkload == nullptr) firstOfWorkload = &r;
    if (r.objectJson.find("\"Finished\"") != std::string::npos) finished = &r;
  }
  REQUIRE(finished != nullptr);
  REQUIRE(firstOfWorkload != nullptr);
  // Stamped when it happened, not when it arrived; the receipt is kept.
  // (The fake server also stamps the update's managedFields entry, which may
  // fall in the next second.)
  CHECK(finished->timeNs >= parseTime(finishedAt));
  CHECK(finished->timeNs <= parseTime(finishedAt) + 1'000'000'000LL);
  CHECK(finished->timeNs < restarted);
  const Json object = Json::parse(finished->objectJson);
  CHECK(object["metadata"]["annotations"].contains("kueue-dra-ledger/received"));
  // The report: 1 cpu from the workload's first record to its finish, as a
  // full history with those times integrates it (within a second).
  const std::string period = " --from " + formatRfc3339(recs.front().timeNs) + " --to " +
                             formatRfc3339(recs.back().timeNs + 1'000'000'000LL);
  const Json report = queryJson(ledgerDir, "report" + period);
  INFO(report.dump());
  CHECK(report["coverage"]["gaps"].empty());
  double reserved = -1;
  for (const auto& row : report["rows"]) {
    if (row["group"] == "team-a" && row["resource"] == "cpu")
      reserved = std::stod(row["reservedResourceSeconds"].get<std::string>());
  }
  const double expected =
      static_cast<double>(finished->timeNs - firstOfWorkload->timeNs) / 1'000'000'000.0;
  CHECK(std::abs(reserved - expected) < 1.0);
}

namespace observation_test {

// The real daemon, its stderr to `log`.
pid_t spawnSidecar(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> all = {programFromEnv("LEDGER_INGEST")};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  REQUIRE(pid > 0);
  return pid;
}

// A metric's value from the daemon's /metrics, -1 when it cannot be read.
double scrapeMetric(int port, const std::string& series) {
  const auto run = runCommand("curl -s -m 5 http://127.0.0.1:" + std::to_string(port) +
                              "/metrics | grep '^" + series + " '");
  if (run.exitCode != 0) return -1;
  return std::stod(run.output.substr(run.output.rfind(' ') + 1));
}

}  // namespace observation_test

TEST_CASE("a first LIST of 100,000 Pods: one snapshot, paged, peak memory reported",
          "[watch][observation][process]") {
  const int pods = kSanitizerBuild ? 20000 : 100000;
  TempDir dir;
  FakeApiServer server;
  server.serve(Resource{"", "v1", "pods", "Pod", true});
  for (int i = 0; i < pods; ++i) {
    Json pod = {{"metadata",
                 {{"namespace", "team-" + std::to_string(i % 16)},
                  {"name", "pod-" + std::to_string(i)},
                  {"ownerReferences", Json::array({{{"apiVersion", "batch/v1"},
                                                    {"kind", "Job"},
                                                    {"name", "job"},
                                                    {"uid", "job-uid"}}})}}},
                {"spec",
                 {{"nodeName", "node-" + std::to_string(i % 64)},
                  {"containers",
                   Json::array({{{"name", "c"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}})}}},
                {"status", {{"phase", "Running"}}}};
    server.create("pods", std::move(pod));
  }
  server.start();
  const std::string ledgerDir = dir.path("ledger");
  const int port = 20000 + static_cast<int>(::getpid() % 20000);
  const pid_t pid =
      spawnSidecar({"--watch", "--ledger", ledgerDir, "--server", server.url(), "--resources",
                    "pods", "--listen", "127.0.0.1:" + std::to_string(port)},
                   dir.path("daemon.log"));
  const bool synced = FakeApiServer::waitFor(
      [&] { return scrapeMetric(port, "ledger_watch_synced{resource=\"core/pods\"}") == 1; },
      300000);
  kill(pid, SIGTERM);
  int status = 0;
  rusage usage{};
  REQUIRE(wait4(pid, &status, 0, &usage) == pid);
  INFO(runCommand("tail -5 " + dir.path("daemon.log")).output);
  REQUIRE(synced);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // Listed in pages of 500 (the daemon's default), committed as they came.
  CHECK(server.listRequests() >= pods / 500);
  // Compressed as client-go asks, with gzip.
  CHECK(server.listAcceptEncoding() == "gzip");
  auto ledger = openLedger(ledgerDir);
  CHECK(ledger->lastSeq() == static_cast<std::uint64_t>(pods) + 2);
  CHECK(snapshotsClosed(*ledger) == 1);
  const double peakMiB = static_cast<double>(usage.ru_maxrss) / 1024.0;
  WARN("the daemon's peak resident memory for a first LIST of " << pods << " Pods: " << peakMiB
                                                                << " MiB");
  // Streamed page by page: the peak is the daemon's live state of 100,000
  // Pods and RocksDB's write buffers, not the LIST held as JSON trees
  // (docs/watch-daemon.md, "The first day").
  CHECK(peakMiB < 1024);
}
