// Replay over a simulated cluster large enough to take every path a query
// takes at scale: a long fold that defers and reads the survivors afterwards,
// a short fold after a checkpoint that keeps records as they pass, and more
// pending objects than one lookup batch, read in two halves at once.
#include "checkpoints.h"
#include "replayer.h"
#include "sim_stream.h"
#include "test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

// 64 nodes publish 576 ResourceSlices: more live objects than materialize
// reads on one thread.
std::string generate(std::uint64_t events) { return simulatedStream(11, events, 64, 4); }

}  // namespace

TEST_CASE("folds of a large simulated cluster agree on every path", "[generator][replay]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  const IngestOutcome out = ingestText(*ledger, generate(6000));
  REQUIRE(out.rejected == 0);
  const std::uint64_t last = ledger->lastSeq();
  REQUIRE(last == 6000);

  // The reference: every record copied as it is folded, nothing read back.
  std::map<std::uint64_t, Digest> expected;
  std::size_t liveAtEnd = 0;
  {
    replay::ClusterState eager;
    REQUIRE(ledger
                ->scanProjectionWords(1, last,
                                      [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
                                        eager.apply(seq, w);
                                        if (seq % 500 == 0 || seq == last || seq == 4097)
                                          expected[seq] = eager.digest();
                                        return true;
                                      })
                .isOk());
    liveAtEnd = eager.liveObjects();
  }
  REQUIRE(liveAtEnd > 1024);

  replay::Replayer replayer(*ledger);
  replay::FoldOptions noCheckpoints;
  noCheckpoints.useCheckpoints = false;
  SECTION("without checkpoints: long folds defer, short ones copy") {
    for (const auto& [seq, digest] : expected) {
      INFO("seq " << seq);
      const replay::ClusterState state = replayer.foldTo(seq, noCheckpoints);
      CHECK(state.materialized());
      CHECK(state.digest() == digest);
    }
  }
  SECTION("from checkpoints: references read in two halves, then a short fold") {
    REQUIRE(replay::writeCheckpoints(*ledger, 2000) == 3);
    std::vector<std::string> bad;
    replay::FoldOptions withCheckpoints;
    withCheckpoints.onBadCheckpoint = [&](std::uint64_t seq, const std::string& why) {
      bad.push_back(std::to_string(seq) + ": " + why);
    };
    for (const auto& [seq, digest] : expected) {
      INFO("seq " << seq);
      const replay::ClusterState state = replayer.foldTo(seq, withCheckpoints);
      CHECK(state.digest() == digest);
    }
    CHECK(bad.empty());
  }
  SECTION("a record missing for the parallel read fails the materialize") {
    replay::ClusterState state;
    REQUIRE(ledger
                ->scanProjectionWords(1, last,
                                      [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
                                        state.applyDeferred(seq, w);
                                        return true;
                                      })
                .isOk());
    auto empty = openLedger(dir.path("empty"));
    const Status st = state.materialize(*empty);
    CHECK(st.code() == Status::Code::kNotFound);
    CHECK_FALSE(state.materialized());
    // The same state reads its records from the right ledger afterwards.
    REQUIRE(state.materialize(*ledger).isOk());
    CHECK(state.digest() == expected.at(last));
  }
}
