// WorkloadWhy: the why command's answer as the resource kubectl lists, its
// summary and its table columns.
#include "tools/serve/workload_whys.h"

#include <catch2/catch.hpp>

#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"
#include "tools/serve/table_columns.h"

using namespace ledger::serve;
using nlohmann::json;

namespace workload_whys_test {

// Two waits (the second still open at the moment) around one admission,
// and two evictions, one of them not conforming.
json whyAnswer() {
  return json::parse(R"({"workload": "team-a/job-1",
    "intervals": [
      {"from": "2026-11-20T08:00:00Z", "to": "2026-11-20T08:10:00Z", "state": "Pending",
       "reason": "Pending: insufficient quota", "blockedBy": [], "shortfalls": []},
      {"from": "2026-11-20T08:10:00Z", "to": "2026-11-20T09:00:00Z", "state": "Admitted",
       "reason": "", "blockedBy": [], "shortfalls": []},
      {"from": "2026-11-20T09:00:00Z", "to": null, "state": "Pending",
       "reason": "Pending: insufficient quota", "blockedBy": [], "shortfalls": []}],
    "evictions": [
      {"at": "2026-11-20T09:00:00Z", "reason": "Preempted: x", "preemptor": "team-a/hi",
       "policy": "withinClusterQueue", "conforms": false, "explanation": "Never"},
      {"at": "2026-11-20T09:00:00Z", "reason": "InactiveWorkload: y", "preemptor": null,
       "policy": null, "conforms": null, "explanation": ""}],
    "findings": [{"type": "UnexpectedPreemption", "object": "Workload team-a/job-1",
                  "message": "m"}]})");
}

Moment momentAt(const char* time) {
  Moment m;
  m.seq = 40;
  m.timeNs = *ledger::tryParseRfc3339(time);
  return m;
}

}  // namespace workload_whys_test

namespace wwt = workload_whys_test;

TEST_CASE("a WorkloadWhy sums its pending intervals to the moment and counts its evictions") {
  const json o =
      workloadWhyObject("team-a", "job-1", wwt::whyAnswer(), wwt::momentAt("2026-11-20T09:30:00Z"));
  CHECK(o["kind"] == "WorkloadWhy");
  CHECK(o["apiVersion"] == "quota-ledger.io/v1alpha1");
  CHECK(o["metadata"]["namespace"] == "team-a");
  CHECK(o["metadata"]["resourceVersion"] == "40");
  CHECK(o["metadata"]["creationTimestamp"] == "2026-11-20T08:00:00Z");
  CHECK(o["status"]["state"] == "Pending");
  // 10 minutes, then 30 to the moment.
  CHECK(o["status"]["waitedSeconds"] == 40 * 60);
  CHECK(o["status"]["waited"] == "40m");
  CHECK(o["status"]["evictionCount"] == 2);
  CHECK(o["status"]["unexpectedCount"] == 1);
  CHECK(o["status"]["intervals"] == wwt::whyAnswer()["intervals"]);
  CHECK(o["status"]["evictions"][0]["preemptor"] == "team-a/hi");
  CHECK(o["status"]["findings"].size() == 1);
}

TEST_CASE("an answer that is not the why command's is a 500") {
  CHECK_THROWS_AS(
      workloadWhyObject("a", "b", json::object(), wwt::momentAt("2026-11-20T09:30:00Z")), ApiError);
  json bad = wwt::whyAnswer();
  bad["intervals"][0]["from"] = "yesterday";
  CHECK_THROWS_AS(workloadWhyObject("a", "b", bad, wwt::momentAt("2026-11-20T09:30:00Z")),
                  ApiError);
}

TEST_CASE("kubectl's WorkloadWhy table: STATE, WAITED, EVICTIONS, UNEXPECTED, AGE") {
  const ApiResource r{"quota-ledger.io", "v1alpha1", "WorkloadWhy", "workloadwhys",
                      "workloadwhy",     {"wlw"},    true,          true};
  const auto cols = tableColumns(r, "v1alpha1");
  std::vector<std::string> names;
  for (const auto& c : cols) names.push_back(c.name);
  CHECK(names ==
        std::vector<std::string>{"Name", "State", "Waited", "Evictions", "Unexpected", "Age"});
  const Moment m = wwt::momentAt("2026-11-20T10:00:00Z");
  const json cells =
      tableCells(cols, workloadWhyObject("team-a", "job-1", wwt::whyAnswer(), m), m.timeNs);
  CHECK(cells == json({"job-1", "Pending", "70m", 2, 1, "120m"}));
}
