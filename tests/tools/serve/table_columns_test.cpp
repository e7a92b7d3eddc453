#include "tools/serve/table_columns.h"

#include <catch2/catch.hpp>

#include "schema/k8s/rfc3339.h"

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

  ApiResource node{"", "v1", "Node", "nodes", "node", {}, false, false};
  cols = tableColumns(node, "v1");
  REQUIRE(cols.size() == 2);
  CHECK(cols[0].name == "Name");
  CHECK(cols[1].name == "Age");
}

namespace core_printer_cases {

std::vector<std::string> headers(const std::vector<TableColumn>& cols, int priority) {
  std::vector<std::string> out;
  for (const auto& c : cols) {
    if (c.priority <= priority) out.push_back(c.name);
  }
  return out;
}

constexpr std::int64_t kSecond = 1'000'000'000;

TEST_CASE("pods get the columns and cells of Kubernetes' printPod") {
  ApiResource pod{"", "v1", "Pod", "pods", "pod", {}, true, false};
  const auto cols = tableColumns(pod, "v1");
  CHECK(headers(cols, 0) == std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age"});
  CHECK(headers(cols, 1) == std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age",
                                                     "IP", "Node", "Nominated Node",
                                                     "Readiness Gates"});
  const json running = json::parse(R"({"metadata": {"name": "job-1-0",
      "creationTimestamp": "2026-11-20T08:00:00Z"},
    "spec": {"nodeName": "node-1", "containers": [{"name": "a"}, {"name": "b"}]},
    "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.7"}],
      "containerStatuses": [
        {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}},
         "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-11-20T08:50:00Z"}}},
        {"name": "b", "ready": false, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})");
  const std::int64_t moment = *ledger::tryParseRfc3339("2026-11-20T09:00:00Z");
  CHECK(tableCells(cols, running, moment) == json{"job-1-0", "1/2", "CrashLoopBackOff",
                                                  "2 (10m ago)", "60m", "10.0.0.7", "node-1",
                                                  "<none>", "<none>"});
  const json pending = json::parse(R"({"metadata": {"name": "p"},
    "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending",
      "conditions": [{"type": "PodScheduled", "reason": "SchedulingGated"}]}})");
  CHECK(tableCells(cols, pending, moment)[2] == "SchedulingGated");
  CHECK(tableCells(cols, pending, moment)[6] == "<none>");
  json init = pending;
  init["spec"]["initContainers"] = json::parse(R"([{"name": "i1"}, {"name": "i2"}])");
  init["status"] = json::parse(R"({"phase": "Pending", "initContainerStatuses": [
      {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
      {"name": "i2", "state": {"running": {}}}]})");
  CHECK(tableCells(cols, init, moment)[2] == "Init:1/2");
  json terminating = running;
  terminating["metadata"]["deletionTimestamp"] = "2026-11-20T08:59:00Z";
  CHECK(tableCells(cols, terminating, moment)[2] == "Terminating");
  json done = running;
  done["status"]["phase"] = "Succeeded";
  done["status"]["containerStatuses"] = json::parse(
      R"([{"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}])");
  CHECK(tableCells(cols, done, moment)[1] == "0/2");
  CHECK(tableCells(cols, done, moment)[2] == "Completed");
}

TEST_CASE("ResourceClaims get Kubernetes' STATE and, under -o wide, devices and consumers") {
  ApiResource claim{
      "resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", "resourceclaim", {}, true, false};
  const auto cols = tableColumns(claim, "v1");
  CHECK(headers(cols, 0) == std::vector<std::string>{"Name", "State", "Age"});
  CHECK(headers(cols, 1) ==
        std::vector<std::string>{"Name", "State", "Age", "Allocated", "Reserved For"});
  json c = json::parse(R"({"metadata": {"name": "gpu-claim"}, "status": {}})");
  CHECK(tableCells(cols, c, 0) == json{"gpu-claim", "pending", nullptr, "<none>", "<none>"});
  c["status"]["allocation"] = json::parse(R"({"devices": {"results": [
      {"driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-0"},
      {"driver": "gpu.nvidia.com", "pool": "node-1", "device": "gpu-1"}]}})");
  CHECK(tableCells(cols, c, 0)[1] == "allocated");
  CHECK(tableCells(cols, c, 0)[3] == "node-1/gpu-0,node-1/gpu-1");
  c["status"]["reservedFor"] = json::parse(R"([{"resource": "pods", "name": "job-1-0"}])");
  CHECK(tableCells(cols, c, 0)[1] == "allocated,reserved");
  CHECK(tableCells(cols, c, 0)[4] == "pods/job-1-0");
  c["metadata"]["deletionTimestamp"] = "2026-11-20T08:00:00Z";
  CHECK(tableCells(cols, c, 0)[1] == "deleted,allocated,reserved");
  c["status"].erase("allocation");
  CHECK(tableCells(cols, c, 0)[1] == "deleted");
}

}  // namespace core_printer_cases
