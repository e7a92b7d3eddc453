#include "tools/serve/table_columns.h"

#include <catch2/catch.hpp>

using namespace ledger::serve;
using nlohmann::json;

TEST_CASE("durations are written as the API machinery's HumanDuration writes them") {
  constexpr std::int64_t s = 1'000'000'000;
  CHECK(humanDuration(-5 * s) == "<invalid>");
  CHECK(humanDuration(0) == "0s");
  CHECK(humanDuration(119 * s) == "119s");
  CHECK(humanDuration(120 * s) == "2m");
  CHECK(humanDuration(200 * s) == "3m20s");
  CHECK(humanDuration(45 * 60 * s) == "45m");
  CHECK(humanDuration((3 * 3600 + 20 * 60) * s) == "3h20m");
  CHECK(humanDuration(30 * 3600 * s) == "30h");
  CHECK(humanDuration((3 * 86400 + 4 * 3600) * s) == "3d4h");
  CHECK(humanDuration(100 * 86400 * s) == "100d");
  CHECK(humanDuration((3 * 365 + 10) * 86400 * s) == "3y10d");
  CHECK(humanDuration(9 * 365 * 86400 * s) == "9y");
}

TEST_CASE("printer column paths read Kueue's forms") {
  const json wl = json::parse(R"({"spec": {"queueName": "user-queue"},
    "status": {"conditions": [{"type": "QuotaReserved", "status": "True"},
                              {"type": "Admitted", "status": "False"}]}})");
  CHECK(evalJsonPath(wl, ".spec.queueName") == "user-queue");
  CHECK(evalJsonPath(wl, ".status.conditions[?(@.type=='Admitted')].status") == "False");
  CHECK(evalJsonPath(wl, ".status.conditions[?(@.type=='Finished')].status").is_null());
  CHECK(evalJsonPath(wl, ".status.conditions[0].type") == "QuotaReserved");
  CHECK(evalJsonPath(wl, ".status.conditions[9].type").is_null());
  CHECK(evalJsonPath(wl, ".spec.missing.deeper").is_null());
}

TEST_CASE("Kueue's kinds get their CRDs' columns; other kinds NAME and AGE") {
  ApiResource cq{"kueue.x-k8s.io", "v1beta2", "ClusterQueue", "clusterqueues",
                 "clusterqueue",   {},        false,          false};
  auto cols = tableColumns(cq, "v1beta2");
  REQUIRE(cols.size() == 5);
  CHECK(cols[1].jsonPath == ".spec.cohortName");
  CHECK(tableColumns(cq, "v1beta1")[1].jsonPath == ".spec.cohort");
  CHECK(cols[2].priority == 1);  // Strategy only with -o wide

  ApiResource wl = cq;
  wl.kind = "Workload";
  cols = tableColumns(wl, "v1beta2");
  CHECK(cols.back().name == "Age");
  const json object = {
      {"metadata", {{"name", "wl-1"}, {"creationTimestamp", "2026-11-20T08:00:00Z"}}},
      {"spec", {{"queueName", "q"}}}};
  // 2026-11-20T08:05:00Z: AGE is counted to the chosen moment, not to now.
  const std::int64_t moment = 1'795'161'900LL * 1'000'000'000LL;
  const json cells = tableCells(cols, object, moment);
  CHECK(cells[0] == "wl-1");
  CHECK(cells[1] == "q");
  CHECK(cells[2].is_null());
  CHECK(cells.back() == "5m");

  ApiResource pod{"", "v1", "Pod", "pods", "pod", {}, true, false};
  cols = tableColumns(pod, "v1");
  REQUIRE(cols.size() == 2);
  CHECK(cols[0].name == "Name");
  CHECK(cols[1].name == "Age");
}
