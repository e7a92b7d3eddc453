// verifyCheckpoints on threads (replay/fold/checkpoint_verification.cpp):
// each range folds on from the checkpoint before it, restored, and for any
// number of threads the answer is one pass's, on sound checkpoints, on a
// cut ledger, and on each damage, at the ranges' edges and beside them.
#include "replay/fold/checkpoints.h"
#include "tests/tamper_support.h"

namespace checkpoint_verification_test {

using namespace ledger;
using namespace ledger::testing;

// tamper::smallLedger with 30 Workloads, checkpointed every 2 records: about
// 16 checkpoints, the later ones holding copies. Their seqs.
std::vector<std::uint64_t> checkpointedLedger(Ledger& ledger) {
  tamper::smallLedger(ledger, 30);
  std::vector<std::uint64_t> seqs;
  REQUIRE(ledger
              .scanCheckpoints([&](std::uint64_t seq, std::string_view) {
                seqs.push_back(seq);
                return true;
              })
              .isOk());
  return seqs;
}

// One pass's answer, after checking every split gives it.
replay::CheckpointVerification sameOnAnyThreads(const Ledger& ledger) {
  const auto one = replay::verifyCheckpoints(ledger, 1);
  for (unsigned threads : {2U, 3U, 5U, 100U}) {
    INFO("threads " << threads << ": " << one.problem);
    const auto split = replay::verifyCheckpoints(ledger, threads);
    CHECK(split.checked == one.checked);
    CHECK(split.firstBadSeq == one.firstBadSeq);
    CHECK(split.problem == one.problem);
  }
  return one;
}

}  // namespace checkpoint_verification_test

using namespace checkpoint_verification_test;

TEST_CASE("verifyCheckpoints gives one pass's answer on any number of threads", "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const std::vector<std::uint64_t> seqs = checkpointedLedger(*ledger);
  REQUIRE(seqs.size() >= 10);
  {
    const auto sound = sameOnAnyThreads(*ledger);
    CHECK(sound.firstBadSeq == 0);
    CHECK(sound.checked == seqs.size());
  }
  const std::size_t middle = seqs.size() / 2;
  for (const std::size_t at : {std::size_t{0}, middle - 1, middle, seqs.size() - 1}) {
    DYNAMIC_SECTION("the checkpoint at seq " << seqs[at] << " claims another time") {
      tamper::checkpointTime(*ledger, seqs[at]);
      CHECK(sameOnAnyThreads(*ledger).firstBadSeq == seqs[at]);
    }
  }
  SECTION("a copy names another time: the checkpoint that wrote it") {
    const std::uint64_t wrote = tamper::copyTime(*ledger);
    CHECK(sameOnAnyThreads(*ledger).firstBadSeq == wrote);
  }
  SECTION("a bad copy after a bad checkpoint: the checkpoint") {
    const std::uint64_t wrote = tamper::copyTime(*ledger);
    const auto before =
        std::find_if(seqs.begin(), seqs.end(), [&](std::uint64_t s) { return s >= wrote; });
    REQUIRE(before != seqs.begin());
    tamper::checkpointTime(*ledger, *(before - 1));
    CHECK(sameOnAnyThreads(*ledger).firstBadSeq == *(before - 1));
  }
  SECTION("a cut ledger, from the checkpoint at the cut") {
    tamper::cutAfter(*ledger, seqs[middle], dir.path("archive"));
    const auto v = sameOnAnyThreads(*ledger);
    CHECK(v.firstBadSeq == 0);
  }
}
