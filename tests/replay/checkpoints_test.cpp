// Checkpoints (issue: point-in-time queries): the state at any seq equals a
// full replay to it; dropping or corrupting checkpoints changes no answer;
// corruption is detected, skipped with a warning, and fails `verify`.
#include <fstream>

#include "checkpoints.h"
#include "format.h"
#include "report_format.h"
#include "test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

std::string reportAt(const Ledger& ledger, std::uint64_t seq, bool useCheckpoints,
                     int* badCheckpoints = nullptr) {
  replay::FoldOptions fo;
  fo.useCheckpoints = useCheckpoints;
  fo.onBadCheckpoint = [&](std::uint64_t, const std::string&) {
    if (badCheckpoints != nullptr) ++*badCheckpoints;
  };
  replay::ClusterState s = replay::Replayer(ledger).foldTo(seq, fo);
  return replay::reportToJson(replay::buildReport(s)).dump();
}

}  // namespace

TEST_CASE("state at every seq equals a full replay to it, with checkpoints every 3 records",
          "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  REQUIRE(ledger->lastSeq() > 30);
  CHECK(replay::writeCheckpoints(*ledger, 3) == ledger->lastSeq() / 3);
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    INFO("seq " << seq);
    CHECK(reportAt(*ledger, seq, true) == reportAt(*ledger, seq, false));
  }
  auto v = replay::verifyCheckpoints(*ledger);
  CHECK(v.firstBadSeq == 0);
  CHECK(v.checked == ledger->lastSeq() / 3);
}

TEST_CASE("writing checkpoints is incremental", "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  const auto first = replay::writeCheckpoints(*ledger, 10);
  CHECK(first == ledger->lastSeq() / 10);
  CHECK(replay::writeCheckpoints(*ledger, 10) == 0);
}

TEST_CASE("dropped checkpoints change no answer", "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  replay::writeCheckpoints(*ledger, 5);
  const std::string with = reportAt(*ledger, 27, true);
  REQUIRE(ledger->dropCheckpoints().isOk());
  std::uint64_t found = 1;
  std::string bytes;
  REQUIRE(ledger->checkpointAtOrBefore(ledger->lastSeq(), &found, &bytes).isOk());
  CHECK(found == 0);
  CHECK(reportAt(*ledger, 27, true) == with);
}

TEST_CASE("a corrupted checkpoint is skipped with a warning, same answers, and verify fails",
          "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  replay::writeCheckpoints(*ledger, 5);
  const std::string expected = reportAt(*ledger, 27, false);
  std::string bytes;
  REQUIRE(ledger->getRaw(format::kCheckpointsFamily, format::seqKey(25), &bytes).isOk());
  bytes[bytes.size() / 2] ^= 0x40;
  REQUIRE(ledger->putRawForTesting(format::kCheckpointsFamily, format::seqKey(25), bytes).isOk());
  int bad = 0;
  CHECK(reportAt(*ledger, 27, true, &bad) == expected);
  CHECK(bad == 1);
  auto v = replay::verifyCheckpoints(*ledger);
  CHECK(v.firstBadSeq == 25);
  CHECK_THAT(v.problem, Catch::Contains("checksum"));
}

TEST_CASE("a checkpoint that disagrees with the log is caught by verify", "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  // A well-formed checkpoint of the state at seq 9, stored as if for seq 10.
  replay::ClusterState nine =
      replay::Replayer(*ledger).foldTo(9, replay::FoldOptions{false, {}, {}});
  REQUIRE(ledger->putCheckpoint(10, nine.serialize()).isOk());
  auto v = replay::verifyCheckpoints(*ledger);
  CHECK(v.firstBadSeq == 10);
}

TEST_CASE("a record a checkpoint names that does not decode fails the query with its seq",
          "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  replay::writeCheckpoints(*ledger, 5);
  // A record the checkpoint at 25 references (the version of a live object).
  replay::ClusterState at25 =
      replay::Replayer(*ledger).foldTo(25, replay::FoldOptions{false, {}, {}});
  std::uint64_t referenced = 0;
  for (std::size_t k = 0; k < static_cast<std::size_t>(replay::ObjectKind::kCount); ++k) {
    for (const auto& [key, obj] : at25.objects(static_cast<replay::ObjectKind>(k))) {
      referenced = std::max(referenced, obj->seq());
    }
  }
  REQUIRE(referenced > 0);
  REQUIRE(ledger
              ->putRawForTesting(format::kProjectionFamily, format::seqKey(referenced),
                                 std::string(24, '\xff'))
              .isOk());
  int bad = 0;
  // The checkpoint is blamed first, then the fold from the start meets the
  // same record: the error names it.
  CHECK_THROWS_WITH(reportAt(*ledger, 27, true, &bad),
                    Catch::Contains("seq " + std::to_string(referenced)));
  CHECK(bad == 1);
}
