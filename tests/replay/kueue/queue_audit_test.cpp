// The ClusterQueue audit (replay/kueue/queue_audit.cpp): quotas Kueue itself would
// refuse are findings.
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

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
