// A stored projection that folds but does not decode deeper down (found by
// tests/fuzz/ledger_bytes_fuzz.cpp): Cap'n Proto checks a pointer when it is
// followed, and a fold follows only the identity and the kind. The report
// must then fail as a corrupt ledger (ReplayError), not abort the process,
// and verify must name the record.
#include "ledger/format.h"
#include "ledger/verify.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

std::string smallCluster() {
  return event("ADDED", resourceFlavor("default")) +
         event("ADDED",
               clusterQueue("cq", "v1beta2", "",
                            {{"default", {{"cpu", 10, 2, nullptr}, {"memory", "10Gi"}}}})) +
         event("ADDED", localQueue("ns", "lq", "cq", "v1beta2"));
}

}  // namespace

TEST_CASE(
    "a projection that folds but does not decode in full is a corrupt ledger, named by verify",
    "[replay][verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  REQUIRE(ingestText(*ledger, smallCluster()).rejected == 0);
  REQUIRE_NOTHROW(reportOf(*ledger));
  VerifyReport sound;
  REQUIRE(verifyLog(*ledger, &sound).isOk());
  REQUIRE(sound.ok());

  const std::uint64_t victim = lastSeqOfKind(*ledger, "ClusterQueue");
  cutLastWordOfProjection(*ledger, victim);

  // The fold reads the identity and the kind, which were written first.
  replay::Replayer replayer(*ledger);
  replay::ClusterState state = replayer.foldTo(ledger->lastSeq());
  // The report (or its digest, on another thread) reads the rest.
  try {
    (void)replay::buildReport(state);
    FAIL("the report read a damaged projection without noticing");
  } catch (const replay::ReplayError& e) {
    CHECK(e.corrupt());
    CHECK(std::string(e.what()).find("does not decode") != std::string::npos);
  }

  VerifyReport damaged;
  REQUIRE(verifyLog(*ledger, &damaged).isOk());
  CHECK(damaged.firstBadSeq == victim);
  CHECK(damaged.problem.find("projection does not decode") != std::string::npos);
  CHECK(damaged.problem.find("rebuild-projection") != std::string::npos);
}

TEST_CASE("verify finds a projection that is another record's", "[replay][verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  REQUIRE(ingestText(*ledger, smallCluster()).rejected == 0);
  REQUIRE(ledger->lastSeq() >= 3);
  std::string other;
  REQUIRE(ledger->getRaw(format::kProjectionFamily, format::seqKey(3), &other).isOk());
  REQUIRE(ledger->putRawForTesting(format::kProjectionFamily, format::seqKey(2), other).isOk());
  VerifyReport v;
  REQUIRE(verifyLog(*ledger, &v).isOk());
  CHECK(v.firstBadSeq == 2);
  CHECK(v.problem.find("projection is not the record's") != std::string::npos);
}
