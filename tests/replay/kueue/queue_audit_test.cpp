// The ClusterQueue audit (replay/kueue/queue_audit.cpp): quotas Kueue itself would
// refuse are findings.
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tools/render/report_format.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

// Kueue's CRD requires nominalQuota and its webhook refuses a negative one;
// both used to pass the audit without a word (null read as 0).
TEST_CASE("a negative or null nominalQuota is an InvalidQuota finding", "[audit]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(
      *ledger,
      event("ADDED", resourceFlavor("default")) +
          event("ADDED", clusterQueue("neg", "v1beta2", "", {{"default", {{"cpu", "-4"}}}})) +
          event("ADDED", clusterQueue("nul", "v1beta2", "", {{"default", {{"cpu", nullptr}}}})) +
          event("ADDED", clusterQueue("ok", "v1beta2", "", {{"default", {{"cpu", "4"}}}})));
  const auto report = reportOf(*ledger);
  CHECK(hasFinding(report, "InvalidQuota", "ClusterQueue neg"));
  CHECK(hasFinding(report, "InvalidQuota", "ClusterQueue nul"));
  CHECK_FALSE(hasFinding(report, "InvalidQuota", "ClusterQueue ok"));
  for (const auto& f : report.findings) {
    if (f.type != "InvalidQuota") continue;
    INFO(f.message);
    CHECK_THAT(f.message, Catch::Contains("nominalQuota of default/cpu is"));
  }
}

namespace {

// The reserved sum of two admitted workloads using `a` and `b` nano-CPUs.
replay::StateReport reservedReport(const std::string& a, const std::string& b) {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::string events = event("ADDED", resourceFlavor("f")) +
                       event("ADDED", clusterQueue("cq", "v1beta2", "", {{"f", {{"cpu", "1"}}}}));
  for (const auto& [name, cpu] : {std::pair{"a", a}, std::pair{"b", b}}) {
    events +=
        event("ADDED", admitted(workload("ns", name, "lq", Json::array({podSet("main", 1, {})})),
                                "cq", "f", {{"cpu", cpu + "n"}}));
  }
  REQUIRE(ingestText(*ledger, events).rejected == 0);
  return reportOf(*ledger);
}

// bc's arbitrary-precision integers, an oracle independent of Quantity's.
std::string bc(const std::string& expression) {
  const CommandRun run = runCommand("echo '" + expression + "' | BC_LINE_LENGTH=0 bc");
  REQUIRE(run.exitCode == 0);
  return run.output.substr(0, run.output.find('\n'));
}

}  // namespace

// Quantities hold +-(2^127 - 1) nano-units exactly. A sum past that used to
// end the whole report with exit 2; it is a finding on the queue, its value
// left out, and the rest of the report is produced.
TEST_CASE("a queue's sum past the exact range is a QuantityOverflow finding", "[audit]") {
  const std::string half = bc("2^126");
  const auto fits = reservedReport(half, bc("2^126 - 1"));
  REQUIRE(fits.clusterQueues.size() == 1);
  CHECK(fits.clusterQueues[0].quotas[0].reserved.toString() == bc("2^127 - 1") + "n");
  CHECK_FALSE(hasFinding(fits, "QuantityOverflow"));

  const auto past = reservedReport(half, half);
  REQUIRE(past.clusterQueues.size() == 1);
  CHECK(past.clusterQueues[0].quotas[0].reservedUnrepresentable);
  CHECK(past.workloads.size() == 2);
  REQUIRE(hasFinding(past, "QuantityOverflow", "ClusterQueue cq"));
  CHECK(std::any_of(past.findings.begin(), past.findings.end(), [](const replay::Finding& f) {
    return f.message.starts_with("reserved f/cpu (its workloads' usage added up) is past");
  }));
  CHECK_THAT(render::reportToJson(past).dump(), Catch::Contains(R"("reserved":null)"));
}

TEST_CASE("a workload's charge past the exact range is a finding on it", "[audit]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const Json pod = {{"containers", Json::array({container("c", {{"cpu", "1e29"}})})}};
  ingestText(
      *ledger,
      event("ADDED", workload("ns", "big", "lq", Json::array({podSet("main", 4, pod)}))) +
          event("ADDED", workload("ns", "small", "lq", Json::array({podSet("main", 1, pod)}))));
  const auto report = reportOf(*ledger);
  CHECK(hasFinding(report, "QuantityOverflow", "Workload ns/big"));
  CHECK_FALSE(hasFinding(report, "QuantityOverflow", "Workload ns/small"));
  CHECK(q(findWorkload(report, "ns", "small")->computed, "cpu") == "100e27");
}
