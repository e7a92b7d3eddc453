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

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "ingest/kube/watch_daemon.h"
#include "tests/ingest/fake_apiserver.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

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

kube::DaemonOptions daemonOptions(const FakeApiServer& server) {
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

std::vector<Record> records(const Ledger& ledger) {
  std::vector<Record> out;
  REQUIRE(ledger
              .scanRecords(1, 0,
                           [&](const Record& r, const Digest&) {
                             out.push_back(r);
                             return true;
                           })
              .isOk());
  return out;
}

std::size_t snapshotsClosed(const Ledger& ledger) {
  std::size_t n = 0;
  for (const auto& r : records(ledger)) {
    n += r.identity.kind == "Snapshot" && r.type == EventType::kModified ? 1 : 0;
  }
  return n;
}

// The objects a ledger holds live at its end, in the order last recorded.
std::vector<Json> finalObjects(const Ledger& ledger) {
  std::map<std::string, std::pair<std::uint64_t, Json>> live;
  for (const auto& r : records(ledger)) {
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

// What the two audits must agree on.
struct Audit {
  std::map<std::string, std::string> workloads;  // ns/name -> computed and errors
  std::set<std::string> findings;                // type, object, message; no ChargeDrift
};

// `drifted`: the workloads whose charge inputs changed after their
// reservation, by the full history (its audit's `current`). A snapshot sees
// only today's inputs: their findings are history's to show, as ChargeDrift.
Audit auditOf(const std::string& ledgerDir, std::set<std::string>* drifted) {
  const auto run = runCommand(programFromEnv("LEDGER_REPLAY") + " --ledger " + ledgerDir +
                              " -o json 2>/dev/null");
  INFO(run.output);
  REQUIRE(run.exitCode == 0);
  const Json report = Json::parse(run.output);
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
      kube::WatchDaemon daemon(*ledger, daemonOptions(server));
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
    const auto run = runCommand(programFromEnv("LEDGER_REPLAY") + " --ledger " + fromCluster +
                                " -o json 2>/dev/null");
    for (const auto& w : Json::parse(run.output)["workloads"]) {
      if (w["state"] == "Admitted" || w["state"] == "QuotaReserved") {
        INFO(w.dump());
        CHECK(w["computedAt"]["basis"] == "snapshot");
      }
    }
    ++compared;
  }
  CHECK(compared >= 8);
}
