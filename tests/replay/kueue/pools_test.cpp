// DRA allocations and counter consumption:
// pools at their newest generation, allocations attributed claim -> Pod ->
// Job -> Workload -> ClusterQueue, consumption per pool and per queue, and
// each finding both raised and (on a near miss) not raised.
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

Json migPartition(const std::string& name, const std::string& memory, bool multi = false) {
  Json d = device(
      name, {{"type", {{"string", "mig"}}}},
      Json::array({{{"counterSet", "gpu-0-cs"}, {"counters", {{"memory", {{"value", memory}}}}}}}));
  if (multi) d["allowMultipleAllocations"] = true;
  return d;
}

std::string pool(int generation = 1, const std::string& rv = "1") {
  Json counters =
      Json::array({{{"name", "gpu-0-cs"}, {"counters", {{"memory", {{"value", "40320Mi"}}}}}}});
  Json devices =
      Json::array({migPartition("gpu-0", "40320Mi"), migPartition("mig-a", "4864Mi"),
                   migPartition("mig-b", "9856Mi"), migPartition("shared", "1Gi", /*multi=*/true)});
  return event("ADDED", resourceSlice("node-1-counters", "gpu.nvidia.com", "node-1", generation, 2,
                                      nullptr, counters, rv)) +
         event("ADDED", resourceSlice("node-1-devices", "gpu.nvidia.com", "node-1", generation, 2,
                                      devices, nullptr, rv));
}

// Two queues, two teams, a mapping of mig.nvidia.com -> gpu.memory.
std::string poolsCluster() {
  Json mapping = {{"name", "gpu.memory"},
                  {"deviceClassNames", {"mig.nvidia.com"}},
                  {"sources", Json::array({counterSource("memory", "gpu.nvidia.com")})}};
  return event("ADDED", kueueConfig(Json::array({mapping}))) +
         event("ADDED", deviceClass("mig.nvidia.com",
                                    {"device.attributes['gpu.nvidia.com'].type == 'mig'"})) +
         pool() + event("ADDED", resourceFlavor("default")) +
         event("ADDED", clusterQueue("team-a", "v1beta2", "",
                                     {{"default", {{"cpu", 10}, {"gpu.memory", "80Gi"}}}})) +
         event("ADDED", clusterQueue("team-b", "v1beta2", "",
                                     {{"default", {{"cpu", 10}, {"gpu.memory", "80Gi"}}}})) +
         event("ADDED", localQueue("a", "lq", "team-a")) +
         event("ADDED", localQueue("b", "lq", "team-b"));
}

// A Job's Workload (admitted with `usage`), its Pod and the Pod's allocated claim.
std::string jobWithDevice(const std::string& ns, const std::string& job, const std::string& cq,
                          const Json& usage, const std::vector<std::string>& devices) {
  Json owner = Json::array({{{"apiVersion", "batch/v1"},
                             {"kind", "Job"},
                             {"name", job},
                             {"uid", "job-" + job},
                             {"controller", true}}});
  Json spec = {{"containers", Json::array({container("c", {{"cpu", "1"}})})}};
  Json wl = admitted(workload(ns, "wl-" + job, "lq", Json::array({podSet("main", 1, spec)})), cq,
                     "default", usage);
  wl["metadata"]["ownerReferences"] = owner;
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", metadata(ns, job + "-pod", "1")},
              {"spec", spec},
              {"status", {{"phase", "Running"}}}};
  pod["metadata"]["ownerReferences"] = owner;
  Json results = Json::array();
  for (const auto& d : devices) {
    results.push_back(
        {{"request", "gpu"}, {"driver", "gpu.nvidia.com"}, {"pool", "node-1"}, {"device", d}});
  }
  Json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", metadata(ns, job + "-claim", "1")},
      {"spec", {{"devices", {{"requests", Json::array({exactRequest("gpu", "mig.nvidia.com")})}}}}},
      {"status",
       {{"allocation", {{"devices", {{"results", results}}}}},
        {"reservedFor", Json::array({{{"resource", "pods"},
                                      {"name", job + "-pod"},
                                      {"uid", "uid-" + ns + "-" + job + "-pod"}}})}}}};
  claim["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "v1"},
                                                       {"kind", "Pod"},
                                                       {"name", job + "-pod"},
                                                       {"uid", "uid-" + ns + "-" + job + "-pod"},
                                                       {"controller", true}}});
  return event("ADDED", wl) + event("ADDED", pod) + event("ADDED", claim);
}

const replay::PoolReport* poolOf(const replay::StateReport& r) {
  for (const auto& p : r.pools) {
    if (p.driver == "gpu.nvidia.com" && p.pool == "node-1") return &p;
  }
  return nullptr;
}

Quantity consumed(const replay::StateReport& r) {
  const auto* p = poolOf(r);
  REQUIRE(p != nullptr);
  for (const auto& c : p->counters) {
    if (c.counterSet == "gpu-0-cs" && c.counter == "memory") return c.consumed;
  }
  FAIL("no counter");
  return {};
}

const replay::ClusterQueueReport& queueNamed(const replay::StateReport& r,
                                             const std::string& name) {
  for (const auto& q : r.clusterQueues) {
    if (q.name == name) return q;
  }
  FAIL("no queue " << name);
  return r.clusterQueues.front();
}

}  // namespace

TEST_CASE("MIG partitions of one GPU held by two workloads in two queues", "[pools]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(
      *ledger,
      poolsCluster() +
          jobWithDevice("a", "ja", "team-a", {{"cpu", "1"}, {"gpu.memory", "4864Mi"}}, {"mig-a"}) +
          jobWithDevice("b", "jb", "team-b", {{"cpu", "1"}, {"gpu.memory", "9856Mi"}}, {"mig-b"}));
  auto r = reportOf(*ledger);
  const auto* p = poolOf(r);
  REQUIRE(p != nullptr);
  CHECK(p->complete);
  CHECK(p->generation == 1);
  CHECK(consumed(r) == Quantity::parse("14720Mi"));
  REQUIRE(p->allocations.size() == 2);
  CHECK(p->allocations[0].device == "mig-a");
  CHECK(p->allocations[0].claim == "a/ja-claim");
  CHECK(p->allocations[0].pod == "a/ja-pod");
  CHECK(p->allocations[0].workload == "a/wl-ja");
  CHECK(p->allocations[0].clusterQueue == "team-a");
  CHECK(p->allocations[1].clusterQueue == "team-b");
  CHECK(queueNamed(r, "team-a").heldDevices == 1);
  REQUIRE(queueNamed(r, "team-a").heldCounters.size() == 1);
  CHECK(queueNamed(r, "team-a").heldCounters[0].consumed == Quantity::parse("4864Mi"));
  CHECK(queueNamed(r, "team-b").heldCounters[0].consumed == Quantity::parse("9856Mi"));
  // Every allocated device is charged and within capacity.
  CHECK_FALSE(hasFinding(r, "UnchargedDRA"));
  CHECK_FALSE(hasFinding(r, "CounterOvercommitted"));
  CHECK_FALSE(hasFinding(r, "DeviceDoubleAllocated"));
  CHECK_FALSE(hasFinding(r, "UnpublishedDevice"));
}

TEST_CASE("a generation bump replaces the pool at once, even while incomplete", "[pools]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json counters =
      Json::array({{{"name", "gpu-0-cs"}, {"counters", {{"memory", {{"value", "80Gi"}}}}}}});
  ingestText(*ledger,
             poolsCluster() + event("ADDED", resourceSlice("node-1-counters-v2", "gpu.nvidia.com",
                                                           "node-1", 2, 2, nullptr, counters)));
  auto r = reportOf(*ledger);
  const auto* p = poolOf(r);
  REQUIRE(p != nullptr);
  CHECK(p->generation == 2);
  CHECK_FALSE(p->complete);
  CHECK(p->devices == 0);  // generation 1's devices stop counting
  REQUIRE(p->counters.size() == 1);
  CHECK(p->counters[0].capacity == Quantity::parse("80Gi"));
}

TEST_CASE("a deleted slice removes its devices; allocations on them become UnpublishedDevice",
          "[pools][findings]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, poolsCluster() + jobWithDevice("a", "ja", "team-a",
                                                     {{"gpu.memory", "4864Mi"}}, {"mig-a"}));
  CHECK_FALSE(hasFinding(reportOf(*ledger), "UnpublishedDevice"));
  Json gone = resourceSlice("node-1-devices", "gpu.nvidia.com", "node-1", 1, 2, Json::array(),
                            nullptr, "7");
  ingestText(*ledger, event("DELETED", gone));
  auto r = reportOf(*ledger);
  const auto* p = poolOf(r);
  REQUIRE(p != nullptr);
  CHECK(p->devices == 0);
  CHECK_FALSE(p->complete);
  CHECK(hasFinding(r, "UnpublishedDevice", "ResourceClaim a/ja-claim"));
  REQUIRE(p->allocations.size() == 1);
  CHECK_FALSE(p->allocations[0].published);
}

TEST_CASE("a claim that cannot be attributed is still listed with what is known", "[pools]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", metadata("x", "orphan", "1")},
      {"spec", {{"devices", {{"requests", Json::array({exactRequest("gpu", "mig.nvidia.com")})}}}}},
      {"status",
       {{"allocation",
         {{"devices",
           {{"results", Json::array({{{"request", "gpu"},
                                      {"driver", "gpu.nvidia.com"},
                                      {"pool", "node-1"},
                                      {"device", "mig-b"}}})}}}}}}}};
  ingestText(*ledger, poolsCluster() + event("ADDED", claim));
  auto r = reportOf(*ledger);
  const auto* p = poolOf(r);
  REQUIRE(p->allocations.size() == 1);
  CHECK(p->allocations[0].claim == "x/orphan");
  CHECK(p->allocations[0].workload.empty());
  CHECK(p->allocations[0].clusterQueue.empty());
  CHECK(consumed(r) == Quantity::parse("9856Mi"));
  CHECK_FALSE(hasFinding(r, "UnchargedDRA"));
}

TEST_CASE("CounterOvercommitted: a whole GPU and one of its partitions both allocated",
          "[pools][findings]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  SECTION("raised") {
    ingestText(*ledger,
               poolsCluster() +
                   jobWithDevice("a", "ja", "team-a", {{"gpu.memory", "40320Mi"}}, {"gpu-0"}) +
                   jobWithDevice("b", "jb", "team-b", {{"gpu.memory", "4864Mi"}}, {"mig-a"}));
    auto r = reportOf(*ledger);
    CHECK(hasFinding(r, "CounterOvercommitted", "Pool gpu.nvidia.com/node-1"));
  }
  SECTION("near miss: partitions filling the GPU exactly") {
    // 4864Mi + 9856Mi + 1Gi well under 40320Mi; then the full capacity exactly.
    ingestText(*ledger,
               poolsCluster() + jobWithDevice("a", "ja", "team-a", {{"gpu.memory", "14720Mi"}},
                                              {"mig-a", "mig-b"}));
    CHECK_FALSE(hasFinding(reportOf(*ledger), "CounterOvercommitted"));
  }
}

TEST_CASE("DeviceDoubleAllocated: one device in two claims, unless it allows multiple allocations",
          "[pools][findings]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  SECTION("raised") {
    ingestText(*ledger,
               poolsCluster() +
                   jobWithDevice("a", "ja", "team-a", {{"gpu.memory", "4864Mi"}}, {"mig-a"}) +
                   jobWithDevice("b", "jb", "team-b", {{"gpu.memory", "4864Mi"}}, {"mig-a"}));
    CHECK(hasFinding(reportOf(*ledger), "DeviceDoubleAllocated", "mig-a"));
  }
  SECTION("near miss: a device with allowMultipleAllocations") {
    ingestText(*ledger,
               poolsCluster() +
                   jobWithDevice("a", "ja", "team-a", {{"gpu.memory", "1Gi"}}, {"shared"}) +
                   jobWithDevice("b", "jb", "team-b", {{"gpu.memory", "1Gi"}}, {"shared"}));
    CHECK_FALSE(hasFinding(reportOf(*ledger), "DeviceDoubleAllocated"));
  }
}

TEST_CASE("UnchargedDRA: a reserved workload holds a device its recorded usage does not charge",
          "[pools][findings]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  SECTION("raised: admitted without the DRA charge") {
    ingestText(*ledger,
               poolsCluster() + jobWithDevice("a", "ja", "team-a", {{"cpu", "1"}}, {"mig-a"}));
    auto r = reportOf(*ledger);
    CHECK(hasFinding(r, "UnchargedDRA", "Workload a/wl-ja"));
  }
  SECTION("near miss: charged, even if by a different amount") {
    ingestText(*ledger,
               poolsCluster() + jobWithDevice("a", "ja", "team-a",
                                              {{"cpu", "1"}, {"gpu.memory", "1"}}, {"mig-a"}));
    CHECK_FALSE(hasFinding(reportOf(*ledger), "UnchargedDRA"));
  }
}
