// A cluster's row of the fleet's overview (tools/serve/fleet_overview.h),
// from its state report: findings counted by type, pending summed over
// ClusterQueues, per resource nominal and reserved summed over queues and
// flavors and held from draHeld, exactly, with null past the exact range.
#include "tools/serve/fleet_overview.h"

#include <catch2/catch.hpp>

namespace fleet_overview_test {

using ledger::serve::summarizeState;
using nlohmann::json;

json twoQueues() {
  return json::parse(R"({
    "clusterQueues": [
      {"name": "a", "workloads": {"pending": 2, "reserved": 1, "admitted": 1},
       "quotas": [
         {"flavor": "f1", "resource": "example.com/gpu", "nominal": "8", "reserved": "4"},
         {"flavor": "f2", "resource": "example.com/gpu", "nominal": "4", "reserved": "2"},
         {"flavor": "f1", "resource": "memory", "nominal": "64Gi", "reserved": "512Mi"}],
       "draHeld": {"devices": 3, "counters": [],
         "quota": [{"flavor": "f1", "resource": "example.com/gpu", "held": "3",
                    "uncharged": "0"}]}},
      {"name": "b", "workloads": {"pending": 5, "reserved": 0, "admitted": 0},
       "quotas": [
         {"flavor": "f1", "resource": "example.com/gpu", "nominal": "0", "reserved": "0"}],
       "draHeld": {"devices": 0, "counters": [], "quota": []}}],
    "findings": [
      {"type": "QuotaExceeded", "object": "ClusterQueue a", "message": "m"},
      {"type": "UnchargedDRA", "object": "Workload ns/w1", "message": "m"},
      {"type": "UnchargedDRA", "object": "Workload ns/w2", "message": "m"}]})");
}

TEST_CASE("a cluster's row sums its ClusterQueues per resource", "[serve][fleet]") {
  const json row = summarizeState(twoQueues());
  CHECK(row["pending"] == 7);
  CHECK(row["clusterQueues"] == 2);
  CHECK(row["findings"] == json({{"QuotaExceeded", 1}, {"UnchargedDRA", 2}}));
  REQUIRE(row["resources"].size() == 2);
  const json& gpu = row["resources"][0];
  CHECK(gpu["resource"] == "example.com/gpu");
  CHECK(gpu["nominal"] == "12");
  CHECK(gpu["reserved"] == "6");
  CHECK(gpu["held"] == "3");
  CHECK(gpu["reservedShare"].get<double>() == Approx(0.5));
  CHECK(gpu["heldShare"].get<double>() == Approx(0.25));
  const json& memory = row["resources"][1];
  CHECK(memory["resource"] == "memory");
  CHECK(memory["nominal"] == "64Gi");
  CHECK(memory["reserved"] == "512Mi");
  CHECK(memory["held"] == "0");
  CHECK(memory["reservedShare"].get<double>() == Approx(1.0 / 128));
}

TEST_CASE("a sum past the exact range is null, and so is its share", "[serve][fleet]") {
  json state = twoQueues();
  state["clusterQueues"][0]["quotas"][1]["reserved"] = nullptr;
  const json row = summarizeState(state);
  const json& gpu = row["resources"][0];
  CHECK(gpu["reserved"].is_null());
  CHECK(gpu["reservedShare"].is_null());
  CHECK(gpu["nominal"] == "12");
}

TEST_CASE("a zero nominal has no share", "[serve][fleet]") {
  json state = twoQueues();
  state["clusterQueues"].erase(0);
  const json row = summarizeState(state);
  REQUIRE(row["resources"].size() == 1);
  CHECK(row["resources"][0]["reservedShare"].is_null());
  CHECK(row["pending"] == 5);
  CHECK(summarizeState(json::object())["resources"].empty());
}

}  // namespace fleet_overview_test
