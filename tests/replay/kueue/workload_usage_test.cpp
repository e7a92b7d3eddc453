// The usage a reserved Workload holds in its ClusterQueue, as Kueue's
// pkg/workload computes it from status.admission and status.reclaimablePods
// (podSetsCountsAfterReclaim, totalRequestsFromAdmission), and what the
// report and the other readers of that usage make of it.
#include <capnp/serialize.h>

#include <cstring>

#include "ingest/projector.h"
#include "replay/kueue/workload_usage.h"
#include "schema/projection.capnp.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

// A Workload object's projection, as replay reads it.
class Projected {
 public:
  explicit Projected(const Json& object) {
    const std::string bytes = ingest::projectObject(object);
    words_ = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
    std::memcpy(words_.begin(), bytes.data(), words_.size() * sizeof(capnp::word));
    reader_ = std::make_unique<capnp::FlatArrayMessageReader>(words_);
  }
  schema::Workload::Reader workload() const {
    return reader_->getRoot<schema::Projection>().getBody().getWorkload();
  }

 private:
  kj::Array<capnp::word> words_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
};

const Json kSpec = {{"containers", Json::array({container("c", {{"cpu", "1"}})})}};

// A Workload with one pod set per (name, count), admitted in flavor "default"
// with `usage[i]` for pod set i, and `reclaimable` as status.reclaimablePods.
Json workloadWith(const std::vector<std::pair<std::string, int>>& podSets,
                  const std::vector<Json>& usage, const Json& reclaimable,
                  const std::vector<int>& admittedCounts = {}) {
  Json sets = Json::array();
  for (const auto& [name, count] : podSets) sets.push_back(podSet(name, count, kSpec));
  Json wl = admitted(workload("ns", "w", "lq", sets), "cq", "default", usage.at(0));
  Json psas = Json::array();
  for (std::size_t i = 0; i < usage.size(); ++i) {
    Json flavors = Json::object();
    for (auto it = usage[i].begin(); it != usage[i].end(); ++it) flavors[it.key()] = "default";
    Json psa = {{"name", podSets.at(i).first}, {"flavors", flavors}, {"resourceUsage", usage[i]}};
    if (i < admittedCounts.size()) psa["count"] = admittedCounts[i];
    psas.push_back(psa);
  }
  wl["status"]["admission"]["podSetAssignments"] = psas;
  if (!reclaimable.is_null()) wl["status"]["reclaimablePods"] = reclaimable;
  return wl;
}

Json reclaim(const std::string& name, int count) { return {{"name", name}, {"count", count}}; }

std::string usageOf(const Projected& p, const std::string& resource) {
  const auto usage = replay::admissionUsage(p.workload(), nullptr);
  auto it = usage.find({"default", resource});
  return it == usage.end() ? "absent" : it->second.toString();
}

}  // namespace

TEST_CASE("podSetsCountsAfterReclaim", "[replay][reclaim]") {
  const Projected p(workloadWith(
      {{"main", 4}, {"workers", 3}, {"idle", 2}}, {{{"cpu", "4"}}, {{"cpu", "3"}}, {{"cpu", "2"}}},
      Json::array({reclaim("main", 1), reclaim("workers", 5), reclaim("ghost", 2)})));
  const auto counts = replay::podSetsCountsAfterReclaim(p.workload());
  CHECK(counts.at("main") == 3);
  CHECK(counts.at("workers") == 0);   // 5 reclaimable of 3: clamped at 0
  CHECK(counts.at("idle") == 2);      // nothing reclaimable
  CHECK(counts.count("ghost") == 0);  // names no pod set: ignored
  CHECK(counts.size() == 3);

  // A name given twice keeps its last count (reclaimableCounts: ToMap).
  const Projected twice(workloadWith({{"main", 4}}, {{{"cpu", "4"}}},
                                     Json::array({reclaim("main", 1), reclaim("main", 3)})));
  CHECK(replay::podSetsCountsAfterReclaim(twice.workload()).at("main") == 1);
}

TEST_CASE("totalRequestsFromAdmission scales each resource by the pods left after reclaim",
          "[replay][reclaim]") {
  SECTION("several resources halved") {
    const Projected p(workloadWith(
        {{"main", 4}}, {{{"cpu", "4"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "4"}, {"pods", "4"}}},
        Json::array({reclaim("main", 2)})));
    const auto sets = replay::totalRequestsFromAdmission(p.workload(), nullptr);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].name == "main");
    CHECK(sets[0].count == 2);
    CHECK(q(sets[0].requests, "cpu") == "2");
    CHECK(q(sets[0].requests, "memory") == "4Gi");
    CHECK(q(sets[0].requests, "nvidia.com/gpu") == "2");
    CHECK(q(sets[0].requests, "pods") == "2");
    CHECK(sets[0].flavors.at("nvidia.com/gpu") == "default");
    CHECK(usageOf(p, "cpu") == "2");
    CHECK(usageOf(p, "nvidia.com/gpu") == "2");
  }
  SECTION("integer division per resource: cpu in milli-units, the rest in units") {
    // cpu 3 over 2 pods: 3000m / 2 = 1500m per pod, 1 left: 1500m.
    // gpu 3 over 2 pods: 3 / 2 = 1 per pod (Go integer division), 1 left: 1.
    // memory 5 bytes over 2: 2 per pod; 1.5 (rounded up to 2 as Value()) over 2: 1.
    const Projected p(workloadWith(
        {{"main", 2}, {"aux", 2}},
        {{{"cpu", "3"}, {"nvidia.com/gpu", "3"}, {"memory", "5"}}, {{"ephemeral-storage", "1.5"}}},
        Json::array({reclaim("main", 1), reclaim("aux", 1)})));
    const auto sets = replay::totalRequestsFromAdmission(p.workload(), nullptr);
    REQUIRE(sets.size() == 2);
    CHECK(q(sets[0].requests, "cpu") == "1500m");
    CHECK(q(sets[0].requests, "nvidia.com/gpu") == "1");
    CHECK(q(sets[0].requests, "memory") == "2");
    CHECK(q(sets[1].requests, "ephemeral-storage") == "1");
  }
  SECTION("a partial admission: the admitted count is what usage is divided by") {
    // Spec 6 pods, 4 admitted (cpu 4), 3 reclaimable: 6 - 3 = 3 left < 4.
    const Projected p(workloadWith({{"main", 6}}, {{{"cpu", "4"}, {"nvidia.com/gpu", "4"}}},
                                   Json::array({reclaim("main", 3)}), {4}));
    const auto sets = replay::totalRequestsFromAdmission(p.workload(), nullptr);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].count == 3);
    CHECK(q(sets[0].requests, "cpu") == "3");
    CHECK(q(sets[0].requests, "nvidia.com/gpu") == "3");
  }
  SECTION("a partial admission with more pods left than admitted keeps its count") {
    const Projected p(
        workloadWith({{"main", 6}}, {{{"cpu", "4"}}}, Json::array({reclaim("main", 1)}), {4}));
    const auto sets = replay::totalRequestsFromAdmission(p.workload(), nullptr);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].count == 4);
    CHECK(q(sets[0].requests, "cpu") == "4");
  }
  SECTION("more reclaimable than admitted: usage 0, never negative") {
    const Projected p(workloadWith({{"main", 4}}, {{{"cpu", "4"}, {"nvidia.com/gpu", "4"}}},
                                   Json::array({reclaim("main", 9)})));
    const auto sets = replay::totalRequestsFromAdmission(p.workload(), nullptr);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].count == 0);
    CHECK(q(sets[0].requests, "cpu") == "0");
    CHECK(usageOf(p, "nvidia.com/gpu") == "0");
  }
  SECTION("a reclaimable pod set that is not in the admission changes nothing") {
    const Projected p(workloadWith({{"main", 4}, {"later", 2}}, {{{"cpu", "4"}}},
                                   Json::array({reclaim("later", 2)})));
    const auto sets = replay::totalRequestsFromAdmission(p.workload(), nullptr);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].name == "main");
    CHECK(sets[0].count == 4);
    CHECK(q(sets[0].requests, "cpu") == "4");
    CHECK(usageOf(p, "cpu") == "4");
  }
  SECTION("without reclaimable pods the recorded usage stands, exactly") {
    const Projected p(
        workloadWith({{"main", 3}}, {{{"cpu", "1500m"}, {"memory", "1.5"}}}, nullptr));
    const auto sets = replay::totalRequestsFromAdmission(p.workload(), nullptr);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].count == 3);
    CHECK(q(sets[0].requests, "cpu") == "1500m");
    CHECK(q(sets[0].requests, "memory") == "1500m");
  }
  SECTION("an assignment the spec does not name: 0 pods after reclaim, as Kueue's map gives") {
    Json wl = workloadWith({{"main", 2}}, {{{"cpu", "2"}}}, nullptr, {2});
    wl["status"]["admission"]["podSetAssignments"][0]["name"] = "renamed";
    const Projected p(wl);
    const auto sets = replay::totalRequestsFromAdmission(p.workload(), nullptr);
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].count == 0);
    CHECK(q(sets[0].requests, "cpu") == "0");
  }
  SECTION("no admission, no usage") {
    Json wl = workloadWith({{"main", 2}}, {{{"cpu", "2"}}}, Json::array({reclaim("main", 1)}));
    wl["status"].erase("admission");
    const Projected p(wl);
    CHECK(replay::totalRequestsFromAdmission(p.workload(), nullptr).empty());
    CHECK(replay::admissionUsage(p.workload(), nullptr).empty());
  }
}

TEST_CASE("recordedUsage stays the plain resourceUsage with reclaimable pods",
          "[replay][reclaim]") {
  const Projected p(workloadWith({{"main", 4}}, {{{"cpu", "4"}, {"nvidia.com/gpu", "4"}}},
                                 Json::array({reclaim("main", 2)})));
  const auto recorded = replay::recordedUsage(p.workload(), nullptr);
  CHECK(q(recorded, "cpu") == "4");
  CHECK(q(recorded, "nvidia.com/gpu") == "4");
}
