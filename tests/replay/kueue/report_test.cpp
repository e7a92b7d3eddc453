// Replay and the audit report: every Kueue kind in v1beta1
// and v1beta2 form, queue usage as the contract defines it, workload states,
// pod requests, findings, determinism.
#include <fstream>

#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tools/render/report_format.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

const replay::QuotaRow* row(const replay::StateReport& r, const std::string& cq,
                            const std::string& flavor, const std::string& resource) {
  for (const auto& q : r.clusterQueues) {
    if (q.name != cq) continue;
    for (const auto& row : q.quotas) {
      if (row.flavor == flavor && row.resource == resource) return &row;
    }
  }
  return nullptr;
}

const replay::ClusterQueueReport* queue(const replay::StateReport& r, const std::string& name) {
  for (const auto& q : r.clusterQueues) {
    if (q.name == name) return &q;
  }
  return nullptr;
}

Json withRv(Json obj, const std::string& rv) {
  obj["metadata"]["resourceVersion"] = rv;
  return obj;
}

std::string queueSetup(const std::string& version) {
  return event("ADDED", resourceFlavor("default", version)) +
         event("ADDED",
               clusterQueue("cq", version, "pool",
                            {{"default", {{"cpu", 10, 2, nullptr}, {"memory", "10Gi"}}}})) +
         event("ADDED", localQueue("ns", "lq", "cq", version));
}

}  // namespace

TEST_CASE("each Kueue kind is read in v1beta1 and v1beta2 form", "[replay]") {
  for (const std::string version : {"v1beta1", "v1beta2"}) {
    SECTION(version) {
      TempDir dir;
      auto ledger = openLedger(dir.path("l"));
      Json cohort = {{"apiVersion", "kueue.x-k8s.io/" + version},
                     {"kind", "Cohort"},
                     {"metadata", metadata("", "pool", "1")},
                     {"spec", {{version == "v1beta1" ? "parent" : "parentName", "root"}}}};
      Json wl = workload(
          "ns", "wl", "lq",
          Json::array(
              {podSet("main", 2,
                      {{"containers",
                        Json::array({container("c", {{"cpu", "1500m"}, {"memory", "1Gi"}})})}})}),
          version);
      auto out = ingestText(
          *ledger,
          queueSetup(version) + event("ADDED", cohort) + event("ADDED", wl) +
              event("MODIFIED", admitted(wl, "cq", "default", {{"cpu", "3"}, {"memory", "2Gi"}})));
      REQUIRE(out.rejected == 0);
      auto r = reportOf(*ledger);
      REQUIRE(queue(r, "cq") != nullptr);
      CHECK(queue(r, "cq")->cohort == "pool");
      CHECK(row(r, "cq", "default", "cpu")->nominal == Quantity::parse("10"));
      CHECK(row(r, "cq", "default", "cpu")->borrowingLimit == Quantity::parse("2"));
      CHECK_FALSE(row(r, "cq", "default", "cpu")->lendingLimit);
      CHECK(row(r, "cq", "default", "cpu")->reserved == Quantity::parse("3"));
      CHECK(row(r, "cq", "default", "memory")->admitted == Quantity::parse("2Gi"));
      const auto* w = findWorkload(r, "ns", "wl");
      REQUIRE(w != nullptr);
      CHECK(w->state == "Admitted");
      CHECK(w->localQueue == "lq");
      CHECK(w->clusterQueue == "cq");
      CHECK(q(w->computed, "cpu") == "3");
      CHECK(q(w->computed, "memory") == "2Gi");
      CHECK(r.findings.empty());
      replay::ClusterState s = replay::Replayer(*ledger).foldTo(ledger->lastSeq());
      CHECK(s.find(replay::ObjectKind::kCohort, "pool") != nullptr);
      CHECK(s.find(replay::ObjectKind::kCohort, "pool")
                ->projection()
                .getBody()
                .getCohort()
                .getParent() == "root");
    }
  }
}

TEST_CASE("reserved and admitted follow QuotaReserved, Admitted and Finished", "[replay]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {{"containers", Json::array({container("c", {{"cpu", "1"}})})}};
  Json a = workload("ns", "a", "lq", Json::array({podSet("main", 1, spec)}));
  Json b = workload("ns", "b", "lq", Json::array({podSet("main", 1, spec)}));
  Json c = workload("ns", "c", "lq", Json::array({podSet("main", 1, spec)}));
  ingestText(*ledger, queueSetup("v1beta2") + event("ADDED", a) + event("ADDED", b) +
                          event("ADDED", c) +
                          event("MODIFIED", admitted(a, "cq", "default", {{"cpu", "1"}},
                                                     /*admittedToo=*/false)) +
                          event("MODIFIED", admitted(b, "cq", "default", {{"cpu", "1"}})));
  auto r = reportOf(*ledger);
  CHECK(row(r, "cq", "default", "cpu")->reserved == Quantity::parse("2"));
  CHECK(row(r, "cq", "default", "cpu")->admitted == Quantity::parse("1"));
  CHECK(queue(r, "cq")->pending == 1);
  CHECK(queue(r, "cq")->reserved == 2);
  CHECK(queue(r, "cq")->admitted == 1);
  CHECK(findWorkload(r, "ns", "a")->state == "QuotaReserved");
  CHECK(findWorkload(r, "ns", "c")->state == "Pending");
  CHECK(findWorkload(r, "ns", "c")->recorded.empty());
  // Finishing releases the quota but keeps `recorded`; deleting leaves the report.
  ingestText(*ledger, event("MODIFIED",
                            withRv(finished(admitted(b, "cq", "default", {{"cpu", "1"}})), "2")) +
                          event("DELETED", withRv(c, "3")));
  r = reportOf(*ledger);
  CHECK(row(r, "cq", "default", "cpu")->reserved == Quantity::parse("1"));
  CHECK(row(r, "cq", "default", "cpu")->admitted == Quantity::parse("0"));
  CHECK(findWorkload(r, "ns", "b")->state == "Finished");
  CHECK(q(findWorkload(r, "ns", "b")->recorded, "cpu") == "1");
  CHECK(findWorkload(r, "ns", "c") == nullptr);
  CHECK(queue(r, "cq")->pending == 0);
}

TEST_CASE("pod requests as Kubernetes computes them: sidecars, init max, overhead, limits",
          "[replay]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {{"initContainers",
                Json::array({container("init-big", {{"cpu", "4"}}),
                             // A sidecar (restartPolicy Always) runs beside everything after it.
                             with(container("sidecar", {{"cpu", "500m"}, {"memory", "100Mi"}}),
                                  "restartPolicy", "Always"),
                             container("init-after-sidecar", {{"cpu", "1"}, {"memory", "1Gi"}})})},
               {"containers",
                Json::array({container("a", {{"cpu", "1"}, {"memory", "200Mi"}}),
                             {{"name", "b"}, {"resources", {{"limits", {{"cpu", "250m"}}}}}}})},
               {"overhead", {{"cpu", "100m"}}}};
  ingestText(*ledger,
             queueSetup("v1beta2") +
                 event("ADDED", workload("ns", "w", "lq", Json::array({podSet("main", 3, spec)}))));
  auto r = reportOf(*ledger);
  const auto* w = findWorkload(r, "ns", "w");
  REQUIRE(w != nullptr);
  // containers: cpu 1 + 250m (limit as request) + sidecar 500m = 1750m;
  // init: max(4, 500m + 1) = 4 -> cpu 4 + overhead 100m = 4100m per pod, x3.
  CHECK(Quantity::parse(q(w->computed, "cpu")) == Quantity::parse("12300m"));
  // memory: 200Mi + 100Mi (sidecar) = 300Mi vs init 100Mi + 1Gi = 1124Mi -> 1124Mi x3.
  CHECK(Quantity::parse(q(w->computed, "memory")) == Quantity::parse("3372Mi"));
}

TEST_CASE("ChargeMismatch: recorded differs from computed, and a near miss stays quiet",
          "[replay][findings]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {{"containers", Json::array({container("c", {{"cpu", "1"}, {"memory", "1Gi"}})})}};
  Json a = workload("ns", "a", "lq", Json::array({podSet("main", 2, spec)}));
  Json b = workload("ns", "b", "lq", Json::array({podSet("main", 2, spec)}));
  ingestText(
      *ledger,
      queueSetup("v1beta2") +
          event("ADDED", admitted(a, "cq", "default", {{"cpu", "1"}, {"memory", "2Gi"}})) +
          // Same values written differently: not a mismatch.
          event("ADDED", admitted(b, "cq", "default", {{"cpu", "2000m"}, {"memory", "2048Mi"}})));
  auto r = reportOf(*ledger);
  CHECK(hasFinding(r, "ChargeMismatch", "Workload ns/a"));
  CHECK_FALSE(hasFinding(r, "ChargeMismatch", "Workload ns/b"));
  bool named = false;
  for (const auto& f : r.findings) named |= f.message == "cpu: recorded 1, computed 2";
  CHECK(named);
}

TEST_CASE("QuotaExceeded: beyond nominal plus what the cohort may lend", "[replay][findings]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {{"containers", Json::array({container("c", {{"cpu", "1"}})})}};
  auto wl = [&](const std::string& name, const std::string& cpu) {
    return admitted(workload("ns", name, "lq", Json::array({podSet("main", 1, spec)})), "team-a",
                    "default", {{"cpu", cpu}});
  };
  std::string base =
      event("ADDED", resourceFlavor("default")) +
      event("ADDED",
            clusterQueue("team-a", "v1beta2", "pool", {{"default", {{"cpu", 4, 2, nullptr}}}})) +
      event("ADDED",
            clusterQueue("team-b", "v1beta2", "pool", {{"default", {{"cpu", 4, nullptr, 1}}}})) +
      event("ADDED", localQueue("ns", "lq", "team-a"));
  SECTION("within nominal plus borrowing: quiet") {
    // team-a may use 4 + min(borrowingLimit 2, team-b lends 1) = 5.
    ingestText(*ledger, base + event("ADDED", wl("w1", "5")));
    CHECK_FALSE(hasFinding(reportOf(*ledger), "QuotaExceeded"));
  }
  SECTION("one more than the lendingLimit allows") {
    ingestText(*ledger, base + event("ADDED", wl("w1", "6")));
    auto r = reportOf(*ledger);
    CHECK(hasFinding(r, "QuotaExceeded", "ClusterQueue team-a"));
  }
}

TEST_CASE("StatusMismatch: the ClusterQueue's own status against recomputed usage",
          "[replay][findings]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {{"containers", Json::array({container("c", {{"cpu", "1"}})})}};
  Json cq = clusterQueue("cq", "v1beta2", "", {{"default", {{"cpu", 10}}}});
  auto status = [](const std::string& reserved, const std::string& used) {
    return Json{
        {"flavorsReservation",
         Json::array({{{"name", "default"},
                       {"resources", Json::array({{{"name", "cpu"}, {"total", reserved}}})}}})},
        {"flavorsUsage",
         Json::array({{{"name", "default"},
                       {"resources", Json::array({{{"name", "cpu"}, {"total", used}}})}}})}};
  };
  ingestText(
      *ledger,
      event("ADDED", resourceFlavor("default")) +
          event("ADDED", with(cq, "status", status("1", "1"))) +
          event("ADDED", localQueue("ns", "lq", "cq")) +
          event("ADDED", admitted(workload("ns", "w", "lq", Json::array({podSet("main", 1, spec)})),
                                  "cq", "default", {{"cpu", "1"}})));
  CHECK_FALSE(hasFinding(reportOf(*ledger), "StatusMismatch"));
  ingestText(*ledger, event("MODIFIED", with(withRv(cq, "2"), "status", status("1000m", "3"))));
  auto r = reportOf(*ledger);
  CHECK(hasFinding(r, "StatusMismatch", "ClusterQueue cq"));
  int mismatches = 0;
  for (const auto& f : r.findings) mismatches += f.type == "StatusMismatch";
  CHECK(mismatches == 1);  // 1000m equals 1: only flavorsUsage disagrees
}

// pkg/cache adds Info.ResourceUsage() (totalRequestsFromAdmission, scaled
// down by status.reclaimablePods) to the ClusterQueue, and the queue's status
// reports that: a Kueue that applied the reclaim agrees with the rows, one
// whose count went stale (kueue#14609) does not.
TEST_CASE("StatusMismatch: reclaimablePods in the rows and in the ClusterQueue's status",
          "[replay][findings][reclaim]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {
      {"containers", Json::array({container("c", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}})})}};
  Json cq = clusterQueue("cq", "v1beta2", "", {{"default", {{"cpu", 10}, {"nvidia.com/gpu", 8}}}});
  auto status = [](const std::string& cpu, const std::string& gpu) {
    Json resources = Json::array(
        {{{"name", "cpu"}, {"total", cpu}}, {{"name", "nvidia.com/gpu"}, {"total", gpu}}});
    Json flavors = Json::array({{{"name", "default"}, {"resources", resources}}});
    return Json{{"flavorsReservation", flavors}, {"flavorsUsage", flavors}};
  };
  Json wl = admitted(workload("ns", "w", "lq", Json::array({podSet("main", 4, spec)})), "cq",
                     "default", {{"cpu", "4"}, {"nvidia.com/gpu", "4"}});
  Json reclaimed = withRv(wl, "2");
  reclaimed["status"]["reclaimablePods"] = Json::array({{{"name", "main"}, {"count", 3}}});
  ingestText(*ledger, event("ADDED", resourceFlavor("default")) +
                          event("ADDED", with(cq, "status", status("4", "4"))) +
                          event("ADDED", localQueue("ns", "lq", "cq")) + event("ADDED", wl) +
                          event("MODIFIED", reclaimed) +
                          event("MODIFIED", with(withRv(cq, "2"), "status", status("1", "1"))));
  auto r = reportOf(*ledger);
  CHECK(row(r, "cq", "default", "cpu")->reserved == Quantity::parse("1"));
  CHECK(row(r, "cq", "default", "nvidia.com/gpu")->admitted == Quantity::parse("1"));
  CHECK(q(findWorkload(r, "ns", "w")->recorded, "nvidia.com/gpu") == "4");
  CHECK_FALSE(hasFinding(r, "StatusMismatch"));
  CHECK_FALSE(hasFinding(r, "ChargeMismatch"));

  // The status still charging all 4 pods disagrees, in both fields and both
  // resources, with the usage the workloads hold after the reclaim.
  ingestText(*ledger, event("MODIFIED", with(withRv(cq, "3"), "status", status("4", "4"))));
  r = reportOf(*ledger);
  int mismatches = 0;
  for (const auto& f : r.findings) {
    if (f.type != "StatusMismatch") continue;
    ++mismatches;
    CHECK(f.object == "ClusterQueue cq");
    CHECK_THAT(f.message, Catch::EndsWith(": status says 4, workloads add up to 1 (resourceUsage 4 "
                                          "less 3 for status.reclaimablePods)"));
  }
  CHECK(mismatches == 4);
}

TEST_CASE("a malformed quantity is a finding on its object, not a crash", "[replay][findings]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {{"containers", Json::array({container("c", {{"cpu", "lots"}, {"memory", "1Gi"}})})}};
  auto out = ingestText(
      *ledger,
      queueSetup("v1beta2") +
          event("ADDED", workload("ns", "w", "lq", Json::array({podSet("main", 1, spec)}))));
  CHECK(out.rejected == 0);
  auto r = reportOf(*ledger);
  CHECK(hasFinding(r, "MalformedQuantity", "Workload ns/w"));
  CHECK(q(findWorkload(r, "ns", "w")->computed, "memory") == "1Gi");
}

TEST_CASE("the same log prints the same bytes; until-seq stops early", "[replay][determinism]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::ifstream in(LEDGER_SOURCE_DIR "/tools/demo/cluster-events.jsonl");
  REQUIRE(in);
  std::string text(std::istreambuf_iterator<char>(in), {});
  ingestText(*ledger, text);
  const std::string a = render::reportToJson(reportOf(*ledger)).dump(2);
  const std::string b = render::reportToJson(reportOf(*ledger)).dump(2);
  CHECK(a == b);
  auto early = reportOf(*ledger, 3);
  CHECK(early.seq == 3);
  CHECK(render::reportToJson(early).dump() != render::reportToJson(reportOf(*ledger)).dump());
}

TEST_CASE("the report's digest is the state's, computed beside the audits",
          "[replay][determinism]") {
  // buildReport hashes the state on another thread while it audits (the
  // ThreadSanitizer build runs this): the digest must be the state's own.
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::ifstream in(LEDGER_SOURCE_DIR "/tools/demo/cluster-events.jsonl");
  REQUIRE(in);
  ingestText(*ledger, std::string(std::istreambuf_iterator<char>(in), {}));
  replay::Replayer replayer(*ledger);
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    INFO("seq " << seq);
    const replay::ClusterState state = replayer.foldTo(seq);
    const replay::StateReport report = replay::buildReport(state);
    CHECK(report.digest == toHex(state.digest()));
  }
}

TEST_CASE("a report without the digest is the same report, the digest left empty",
          "[replay][determinism]") {
  // `ledger-query usage` prints only the ClusterQueue rows and skips the
  // digest: everything else must be what the full report computes.
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::ifstream in(LEDGER_SOURCE_DIR "/tools/demo/cluster-events.jsonl");
  REQUIRE(in);
  ingestText(*ledger, std::string(std::istreambuf_iterator<char>(in), {}));
  replay::Replayer replayer(*ledger);
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    INFO("seq " << seq);
    const replay::ClusterState state = replayer.foldTo(seq);
    replay::StateReport full = replay::buildReport(state);
    const replay::StateReport partial = replay::buildReport(state, {.digest = false});
    CHECK(partial.digest.empty());
    full.digest.clear();
    CHECK(render::reportToJson(partial).dump() == render::reportToJson(full).dump());
  }
}
