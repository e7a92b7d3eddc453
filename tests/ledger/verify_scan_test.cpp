// verifyLog's scan split into ranges checked on threads of their own
// (ledger/internal/verify_scan.h): for every split, the report is the single
// pass's, field for field, on a sound ledger, a cut one, and each damage the
// log's scan finds, at the ranges' edges and beside them.
#include "ledger/verify.h"
#include "tests/tamper_support.h"

namespace verify_scan_test {

using namespace ledger;
using namespace ledger::testing;

// A ClusterQueue, its LocalQueue and `workloads` Workloads, every third
// deleted again: each object's last record matters to `live`.
std::uint64_t longerLedger(Ledger& ledger, int workloads) {
  using namespace k8s;
  std::string events =
      event("ADDED", resourceFlavor("default")) +
      event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"memory", "8Gi"}}}})) +
      event("ADDED", localQueue("team", "lq", "cq"));
  for (int i = 0; i < workloads; ++i) {
    const Json w = workload(
        "team", "w" + std::to_string(i), "lq",
        Json::array({podSet(
            "main", 1, {{"containers", Json::array({container("c", {{"memory", "1Gi"}})})}})}));
    events += event("ADDED", w);
    if (i % 3 == 2) events += event("DELETED", w);
  }
  REQUIRE(ingestText(ledger, events).rejected == 0);
  return ledger.lastSeq();
}

VerifyReport verifiedIn(const Ledger& ledger, unsigned ranges) {
  VerifyOptions options = tamper::ingestDerivations();
  options.scanRanges = ranges;
  VerifyReport report;
  const Status st = verifyLog(ledger, &report, options);
  INFO(st.toString());
  REQUIRE(st.isOk());
  return report;
}

// The single pass's report, after checking every split gives it.
VerifyReport sameForEverySplit(const Ledger& ledger) {
  const VerifyReport one = verifiedIn(ledger, 1);
  for (unsigned ranges : {2U, 3U, 4U, 7U, 1000U}) {
    INFO("ranges " << ranges << ": " << one.problem);
    const VerifyReport split = verifiedIn(ledger, ranges);
    CHECK(split.firstBadSeq == one.firstBadSeq);
    CHECK(split.badFamily == one.badFamily);
    CHECK(split.badKey == one.badKey);
    CHECK(split.problem == one.problem);
    CHECK(split.recordsChecked == one.recordsChecked);
    CHECK(split.lastSeq == one.lastSeq);
    CHECK(split.lastHashHex == one.lastHashHex);
  }
  return one;
}

void flipByte(Ledger& ledger, std::uint64_t seq) {
  std::string value;
  REQUIRE(ledger.getRaw(format::kLogFamily, format::seqKey(seq), &value).isOk());
  value[40 % value.size()] ^= 0x01;
  REQUIRE(ledger.putRawForTesting(format::kLogFamily, format::seqKey(seq), value).isOk());
}

}  // namespace verify_scan_test

using namespace verify_scan_test;

TEST_CASE("verify's scan gives the single pass's report for any split", "[verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const std::uint64_t head = longerLedger(*ledger, 30);
  REQUIRE(head > 30);
  REQUIRE(sameForEverySplit(*ledger).ok());

  // The edges of 2, 3, 4 and 7 ranges fall on and beside these.
  const std::uint64_t middle = head / 2;
  for (const std::uint64_t victim :
       {std::uint64_t{1}, std::uint64_t{2}, middle, middle + 1, head - 1, head}) {
    DYNAMIC_SECTION("a flipped byte in record " << victim) {
      flipByte(*ledger, victim);
      CHECK(sameForEverySplit(*ledger).firstBadSeq == victim);
    }
    DYNAMIC_SECTION("record " << victim << " missing") {
      REQUIRE(ledger->deleteRawForTesting(format::kLogFamily, format::seqKey(victim)).isOk());
      CHECK(sameForEverySplit(*ledger).firstBadSeq == victim);
    }
    DYNAMIC_SECTION("the projection of record " << victim << " missing") {
      REQUIRE(
          ledger->deleteRawForTesting(format::kProjectionFamily, format::seqKey(victim)).isOk());
      CHECK(sameForEverySplit(*ledger).problem == "projection missing");
    }
    DYNAMIC_SECTION("the time index entry of record " << victim << " missing") {
      std::int64_t time = 0;
      REQUIRE(ledger->timeOf(victim, &time).isOk());
      REQUIRE(ledger->deleteRawForTesting(format::kTimeIndexFamily, format::timeKey(time, victim))
                  .isOk());
      CHECK(sameForEverySplit(*ledger).firstBadSeq == victim);
    }
  }
  SECTION("two damages: the lower is named, whichever range finds it") {
    flipByte(*ledger, head - 2);
    REQUIRE(ledger->deleteRawForTesting(format::kProjectionFamily, format::seqKey(middle)).isOk());
    CHECK(sameForEverySplit(*ledger).firstBadSeq == middle);
  }
  SECTION("an object's live entry, which the last range's record decides") {
    tamper::live(*ledger, head);
    CHECK(sameForEverySplit(*ledger).firstBadSeq == head);
  }
  SECTION("a cut ledger, from the link to its archive") {
    tamper::cutAfter(*ledger, middle, dir.path("archive"));
    const VerifyReport v = sameForEverySplit(*ledger);
    CHECK(v.ok());
    CHECK(v.recordsChecked == head - middle);
  }
}
