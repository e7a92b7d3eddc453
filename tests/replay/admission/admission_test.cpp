// The admission decision around the flavor assigner: queue resolution, the
// DRA charge as the answer, the workload's own reservation left out, the
// plain-words shortfall, preemption candidates, Job manifests, Kueue's number
// formatting and resource order, and flavor eligibility details.
#include "replay/admission/admission.h"
#include "replay/admission/flavor_eligibility.h"
#include "tests/replay/admission/admission_fixture.h"
#include "tools/render/admission_format.h"

using namespace ledger::testing::admission;

namespace {

Json localQueueWith(const std::string& ns, const std::string& name, const std::string& cq) {
  return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
              {"kind", "LocalQueue"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-lq-" + name}}},
              {"spec", {{"clusterQueue", cq}}}};
}

// A workload of `gpus` GPUs; `reservedIn` non-empty: QuotaReserved and Admitted there.
Json gpuWorkload(const std::string& name, int gpus, const std::string& reservedIn, int priority = 0,
                 const Json& podSpec = Json::object()) {
  Json wl = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
             {"kind", "Workload"},
             {"metadata",
              {{"name", name},
               {"namespace", "team-a"},
               {"uid", "uid-" + name},
               {"creationTimestamp", "2026-11-01T00:00:00Z"}}},
             {"spec",
              {{"queueName", "user-queue"},
               {"priority", priority},
               {"podSets",
                {podSetWith("main", 1, {{"nvidia.com/gpu", std::to_string(gpus)}}, podSpec)}}}}};
  if (!reservedIn.empty()) {
    wl["status"] = {{"conditions",
                     {{{"type", "QuotaReserved"}, {"status", "True"}},
                      {{"type", "Admitted"}, {"status", "True"}}}},
                    {"admission",
                     {{"clusterQueue", reservedIn},
                      {"podSetAssignments",
                       {{{"name", "main"},
                         {"count", 1},
                         {"flavors", {{"nvidia.com/gpu", "default-flavor"}}},
                         {"resourceUsage", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}};
  }
  return wl;
}

// team-a (4 GPUs) and team-b (4 GPUs, lendingLimit 0) in cohort gpu-pool.
void gpuCluster(Fixture& f, const Json& teamAExtra = Json::object()) {
  f.add(resourceFlavorWith("default-flavor"));
  f.add(clusterQueueWith("team-a",
                         {group({flavorQuotas("default-flavor", {quota("nvidia.com/gpu", "4")})})},
                         "gpu-pool", teamAExtra));
  f.add(clusterQueueWith(
      "team-b", {group({flavorQuotas("default-flavor", {quota("nvidia.com/gpu", "4", "", "0")})})},
      "gpu-pool"));
  f.add(localQueueWith("team-a", "user-queue", "team-a"));
}

AdmissionReport evaluate(const Fixture& f, const std::string& name) {
  const StoredObject* obj = f.state.find(ObjectKind::kWorkload, "team-a", name);
  REQUIRE(obj != nullptr);
  AdmissionSubject s{"team-a", name, obj->projection().getBody().getWorkload(),
                     obj->projection().getCreationNs(), true};
  return evaluateAdmission(f.state, s);
}

}  // namespace

TEST_CASE("admission: short 1 GPU, the cohort cannot lend because of team-b's lendingLimit",
          "[admission]") {
  Fixture f;
  gpuCluster(f);
  f.add(gpuWorkload("running", 3, "team-a"));
  f.add(gpuWorkload("waiting", 2, ""));
  const AdmissionReport r = evaluate(f, "waiting");
  CHECK_FALSE(r.fits);
  CHECK(r.clusterQueue == "team-a");
  CHECK(r.cohort == "gpu-pool");
  CHECK(r.wouldNeedPreemption);           // nominal 4 >= 2: Kueue would try preemption
  CHECK(r.preemptionCandidates.empty());  // "running" has the same priority
  CHECK(r.message ==
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
        "flavor default-flavor, 1 more needed");
  REQUIRE(r.podSets.size() == 1);
  REQUIRE(r.podSets[0].shortfalls.size() == 1);
  const ShortfallReport& s = r.podSets[0].shortfalls[0];
  CHECK(s.requested == "2");
  CHECK(s.available == "1");
  CHECK(s.shortBy == "1");
  CHECK(s.reason ==
        "cluster-queue team-a needs 1 more nvidia.com/gpu in flavor default-flavor (requests 2; "
        "nominal quota 4, 3 in use); its cohort gpu-pool can lend 0 because team-b's lendingLimit "
        "is 0; Kueue would consider preemption");
  const auto json = ledger::render::admissionToJson(r);
  CHECK(json["podSets"][0]["flavors"][0]["mode"] == "Preempt");
  CHECK(json["inadmissible"].is_null());
}

TEST_CASE("admission: the workload's own reservation is left out", "[admission]") {
  Fixture f;
  gpuCluster(f);
  f.add(gpuWorkload("running", 4, "team-a"));
  const AdmissionReport r = evaluate(f, "running");
  CHECK(r.fits);
  CHECK(r.state == "Admitted");
  REQUIRE(r.podSets[0].flavors.size() == 1);
  CHECK(r.podSets[0].flavors[0].flavor == "default-flavor");
  CHECK(r.podSets[0].flavors[0].mode == "Fit");
}

TEST_CASE("admission: borrowing names the amount and the cohort", "[admission]") {
  Fixture f;
  f.add(resourceFlavorWith("default-flavor"));
  f.add(clusterQueueWith("team-a",
                         {group({flavorQuotas("default-flavor", {quota("nvidia.com/gpu", "1")})})},
                         "gpu-pool"));
  f.add(clusterQueueWith("team-b",
                         {group({flavorQuotas("default-flavor", {quota("nvidia.com/gpu", "4")})})},
                         "gpu-pool"));
  f.add(localQueueWith("team-a", "user-queue", "team-a"));
  f.add(gpuWorkload("big", 3, ""));
  const AdmissionReport r = evaluate(f, "big");
  CHECK(r.fits);
  CHECK(r.borrows);
  REQUIRE(r.podSets[0].flavors.size() == 1);
  CHECK(r.podSets[0].flavors[0].mode == "Borrow");
  CHECK(r.podSets[0].flavors[0].borrowed == std::optional<std::string>("2"));
  CHECK(r.podSets[0].flavors[0].cohort == std::optional<std::string>("gpu-pool"));
}

TEST_CASE("admission: lower-priority workloads are preemption candidates under the policy",
          "[admission]") {
  Fixture f;
  gpuCluster(f, {{"preemption", {{"withinClusterQueue", "LowerPriority"}}}});
  f.add(gpuWorkload("low", 4, "team-a", 1));
  f.add(gpuWorkload("high", 2, "", 100));
  const AdmissionReport r = evaluate(f, "high");
  CHECK_FALSE(r.fits);
  CHECK(r.wouldNeedPreemption);
  REQUIRE(r.preemptionCandidates.size() == 1);
  CHECK(r.preemptionCandidates[0].workload == "team-a/low");
  CHECK(r.preemptionCandidates[0].allowedByPolicy);
  CHECK(r.preemptionCandidates[0].holds.at("default-flavor").at("nvidia.com/gpu") == "4");
}

// The usage a reserved workload holds is pkg/workload
// totalRequestsFromAdmission: its resourceUsage scaled down to the pods
// status.reclaimablePods leaves (4 pods of 1 GPU, 2 reclaimable: 2 GPUs).
TEST_CASE("admission: totalRequestsFromAdmission of the workloads holding quota",
          "[admission][reclaim]") {
  Fixture f;
  gpuCluster(f, {{"preemption", {{"withinClusterQueue", "LowerPriority"}}}});
  Json running = gpuWorkload("running", 1, "team-a", 1);
  running["spec"]["podSets"][0]["count"] = 4;
  running["status"]["admission"]["podSetAssignments"][0]["count"] = 4;
  running["status"]["admission"]["podSetAssignments"][0]["resourceUsage"] = {
      {"nvidia.com/gpu", "4"}};
  running["status"]["reclaimablePods"] = Json::array({{{"name", "main"}, {"count", 2}}});
  f.add(running);
  f.add(gpuWorkload("fits", 2, "", 100));
  f.add(gpuWorkload("short", 3, "", 100));
  CHECK(evaluate(f, "fits").fits);
  const AdmissionReport r = evaluate(f, "short");
  CHECK_FALSE(r.fits);
  REQUIRE(r.podSets.size() == 1);
  REQUIRE(r.podSets[0].shortfalls.size() == 1);
  CHECK(r.podSets[0].shortfalls[0].available == "2");
  REQUIRE(r.preemptionCandidates.size() == 1);
  CHECK(r.preemptionCandidates[0].holds.at("default-flavor").at("nvidia.com/gpu") == "2");
}

// A workload tried again keeps its status.reclaimablePods; Kueue's
// totalRequestsFromPodSets asks for the pods podSetsCountsAfterReclaim leaves.
TEST_CASE("admission: totalRequestsFromPodSets counts the pods left after reclaim",
          "[admission][reclaim]") {
  Fixture f;
  gpuCluster(f);
  f.add(gpuWorkload("running", 2, "team-a"));
  Json waiting = gpuWorkload("waiting", 1, "");
  waiting["spec"]["podSets"][0]["count"] = 4;
  Json reclaimed = waiting;
  reclaimed["metadata"]["name"] = "reclaimed";
  reclaimed["metadata"]["uid"] = "uid-reclaimed";
  reclaimed["status"]["reclaimablePods"] = Json::array({{{"name", "main"}, {"count", 2}}});
  f.add(waiting);
  f.add(reclaimed);
  const AdmissionReport whole = evaluate(f, "waiting");
  CHECK_FALSE(whole.fits);
  REQUIRE(whole.podSets.size() == 1);
  REQUIRE(whole.podSets[0].shortfalls.size() == 1);
  CHECK(whole.podSets[0].shortfalls[0].requested == "4");
  CHECK(evaluate(f, "reclaimed").fits);  // 2 pods of 1 GPU in the 2 left
}

TEST_CASE("admission: queue problems are answered in Kueue's words", "[admission]") {
  Fixture f;
  gpuCluster(f);
  Json wl = gpuWorkload("lost", 1, "");
  wl["spec"]["queueName"] = "missing";
  f.add(wl);
  CHECK(evaluate(f, "lost").inadmissible ==
        std::optional<std::string>("LocalQueue missing doesn't exist"));
  f.add(localQueueWith("team-a", "missing", "nowhere"));
  CHECK(evaluate(f, "lost").inadmissible ==
        std::optional<std::string>("ClusterQueue nowhere doesn't exist"));
}

TEST_CASE("admission: a DRA error is the answer", "[admission]") {
  Fixture f;
  gpuCluster(f);
  f.add(gpuWorkload("claims", 1, "", 0,
                    {{"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", "my-claim"}}}}}));
  const AdmissionReport r = evaluate(f, "claims");
  CHECK_FALSE(r.fits);
  CHECK(r.inadmissible ==
        std::optional<std::string>(
            "KueueDRAIntegration feature does not support use of resource claims"));
  CHECK(r.podSets.empty());
  CHECK(aggregateErrors({"a", "b", "a"}) == "[a, b]");
}

TEST_CASE("workload manifest: a Job becomes Kueue's Workload", "[admission]") {
  Json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata",
               {{"name", "sample"},
                {"namespace", "team-a"},
                {"labels", {{"kueue.x-k8s.io/queue-name", "user-queue"}}}}},
              {"spec",
               {{"parallelism", 3},
                {"completions", 2},
                {"template", {{"spec", {{"containers", {{{"name", "c"}}}}}}}}}}};
  const Json wl = workloadForJob(job);
  CHECK(wl["kind"] == "Workload");
  CHECK(wl["metadata"]["name"] == "job-sample");
  CHECK(wl["spec"]["queueName"] == "user-queue");
  CHECK(wl["spec"]["podSets"][0]["name"] == "main");
  CHECK(wl["spec"]["podSets"][0]["count"] == 2);  // min(parallelism, completions)
  auto obj = workloadObject(job);
  CHECK(obj->ns() == "team-a");
  CHECK(obj->projection().getBody().getWorkload().getPodSets()[0].getCount() == 2);
  job["metadata"].erase("labels");
  CHECK_THROWS_WITH(workloadForJob(job), Catch::Contains("queue-name"));
  CHECK_THROWS_WITH(workloadObject(Json{{"apiVersion", "v1"}, {"kind", "Pod"}}),
                    Catch::Contains("expected a kueue.x-k8s.io Workload"));
}

TEST_CASE("kueue units: ResourceFormatter and SliceRequests order", "[admission]") {
  CHECK(formatKueue("cpu", 1500) == "1500m");
  CHECK(formatKueue("cpu", 2000) == "2");
  CHECK(formatKueue("memory", 1000) == "1k");
  CHECK(formatKueue("memory", 5242880) == "5Mi");
  CHECK(formatKueue("memory", 2048000) == "2000Ki");
  CHECK(formatKueue("memory", 1536) == "1536");
  CHECK(formatKueue("memory", 1000000) == "1M");
  CHECK(formatKueue("nvidia.com/gpu", 15000) == "15k");
  CHECK(formatKueue("gpu-memory", 9856LL << 20, {"gpu-memory"}) == "9856Mi");
  CHECK(formatKueue("cpu", kUnlimited) == "<unlimited>");
  CHECK(fnv1a64("") == 14695981039346656037ULL);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  const auto order = kueueResourceOrder({"memory", "cpu", "pods"});
  CHECK(order.size() == 3);
  CHECK(std::is_sorted(order.begin(), order.end(),
                       [](const auto& a, const auto& b) { return fnv1a64(a) < fnv1a64(b); }));
}

TEST_CASE("flavor eligibility: tolerations and node affinity operators", "[admission]") {
  Fixture f;
  f.add(resourceFlavorWith(
      "gpu", {{"nodeLabels", {{"gen", "5"}, {"zone", "a"}}},
              {"nodeTaints",
               {taint("gpu", "true", "NoExecute"), taint("soft", "x", "PreferNoSchedule")}}}));
  auto check = [&](const Json& podSpec) {
    auto obj = workloadObject(Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                   {"kind", "Workload"},
                                   {"metadata", {{"name", "w"}}},
                                   {"spec", {{"podSets", {podSetWith("main", 1, {}, podSpec)}}}}});
    auto flavor = f.state.find(ObjectKind::kResourceFlavor, "gpu")
                      ->projection()
                      .getBody()
                      .getResourceFlavor();
    return flavorIneligibility(
        "gpu", flavor, obj->projection().getBody().getWorkload().getPodSets()[0].getTemplate());
  };
  CHECK(check(Json::object()) == "untolerated taint {gpu true NoExecute <nil>} in flavor gpu");
  const Json tolerateAll = {{"tolerations", {{{"operator", "Exists"}}}}};
  CHECK(check(tolerateAll).empty());  // PreferNoSchedule is never checked
  Json gt = requiredAffinity(Json::array(
      {{{"matchExpressions", {{{"key", "gen"}, {"operator", "Gt"}, {"values", {"4"}}}}}}}));
  gt.update(tolerateAll);
  CHECK(check(gt).empty());
  Json notIn = requiredAffinity(Json::array(
      {{{"matchExpressions", {{{"key", "zone"}, {"operator", "NotIn"}, {"values", {"a"}}}}}}}));
  notIn.update(tolerateAll);
  CHECK(check(notIn) == "flavor gpu doesn't match node affinity");
}

TEST_CASE("admission: shortfalls and rejected flavors are the ones Kueue reports", "[admission]") {
  Fixture f;
  f.add(resourceFlavorWith("default-flavor"));
  f.add(resourceFlavorWith("spot", {{"nodeTaints", {taint("spot", "true", "NoSchedule")}}}));
  // cpu: "one" is too small, "two" fits; the GPU group has a tainted flavor
  // and one that is too small: the GPU group's reasons replace the cpu ones.
  f.add(clusterQueueWith(
      "team-a",
      {group({flavorQuotas("one", {quota("cpu", "1")}), flavorQuotas("two", {quota("cpu", "8")})}),
       group({flavorQuotas("spot", {quota("nvidia.com/gpu", "8")}),
              flavorQuotas("default-flavor", {quota("nvidia.com/gpu", "1")})})}));
  f.add(localQueueWith("team-a", "user-queue", "team-a"));
  Json wl = gpuWorkload("mixed", 2, "");
  wl["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] =
      "2";
  f.add(wl);
  const AdmissionReport r = evaluate(f, "mixed");
  CHECK_FALSE(r.fits);
  CHECK_FALSE(r.wouldNeedPreemption);
  REQUIRE(r.podSets.size() == 1);
  const PodSetReport& ps = r.podSets[0];
  CHECK(ps.flavors.empty());
  REQUIRE(ps.shortfalls.size() == 1);
  CHECK(ps.shortfalls[0].resource == "nvidia.com/gpu");
  CHECK(ps.shortfalls[0].flavor == "default-flavor");
  CHECK(ps.shortfalls[0].shortBy == "1");
  CHECK_THAT(ps.shortfalls[0].reason, Catch::Contains("it is in no cohort, so it cannot borrow"));
  CHECK_THAT(ps.shortfalls[0].reason, Catch::Contains("waiting will not help"));
  REQUIRE(ps.rejectedFlavors.size() == 1);
  CHECK(ps.rejectedFlavors[0].reason ==
        "untolerated taint {spot true NoSchedule <nil>} in flavor spot");
  CHECK(r.message ==
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor "
        "default-flavor, previously considered podsets requests (0) + current podset request (2) > "
        "maximum capacity (1), untolerated taint {spot true NoSchedule <nil>} in flavor spot");
  const std::string table = ledger::render::admissionToTable(r);
  CHECK_THAT(table, Catch::Contains("FITS          no"));
  CHECK_THAT(table, Catch::Contains("rejected"));
}

TEST_CASE("admission: hierarchical cohorts name every member that keeps its quota", "[admission]") {
  Fixture f;
  f.add(resourceFlavorWith("default-flavor"));
  f.add(cohort("org", "", {}));
  f.add(cohort("research", "org", {}));
  f.add(clusterQueueWith(
      "team-a", {group({flavorQuotas("default-flavor", {quota("nvidia.com/gpu", "2", "1")})})},
      "research"));
  f.add(clusterQueueWith(
      "team-c", {group({flavorQuotas("default-flavor", {quota("nvidia.com/gpu", "4")})})}, "org"));
  f.add(localQueueWith("team-a", "user-queue", "team-a"));
  f.add(gpuWorkload("wide", 4, ""));
  const AdmissionReport r = evaluate(f, "wide");
  CHECK_FALSE(r.fits);
  REQUIRE(r.podSets[0].shortfalls.size() == 1);
  // nominal 2 + borrowingLimit 1 = 3 at most, whatever team-c has.
  CHECK(r.podSets[0].shortfalls[0].available == "3");
  CHECK_THAT(
      r.podSets[0].shortfalls[0].reason,
      Catch::Contains("its cohort research can lend 1 because team-a's borrowingLimit is 1"));
  CHECK_THAT(r.podSets[0].shortfalls[0].kueueMessage, Catch::Contains("maximum capacity (3)"));
}
