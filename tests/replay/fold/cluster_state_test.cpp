// ClusterState's two ways of folding: copying every record (apply) and
// noting record seqs, then reading the survivors once (applyDeferred +
// materialize, what Replayer does). They must agree on every seq.
#include <algorithm>
#include <fstream>

#include "replay/fold/cluster_state.h"
#include "replay/fold/object_reads.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

void fold(const Ledger& ledger, replay::ClusterState& state, std::uint64_t to, bool deferred) {
  REQUIRE(ledger
              .scanProjectionWords(state.seq() + 1, to,
                                   [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
                                     if (deferred) {
                                       state.applyDeferred(seq, w);
                                     } else {
                                       state.apply(seq, w);
                                     }
                                     return true;
                                   })
              .isOk());
}

}  // namespace

TEST_CASE("a deferred fold equals a copying fold at every seq", "[cluster-state]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  REQUIRE(ledger->lastSeq() > 30);
  replay::ClusterState eager;
  replay::ClusterState deferred;
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    INFO("seq " << seq);
    fold(*ledger, eager, seq, false);
    fold(*ledger, deferred, seq, true);
    REQUIRE(deferred.materialize(*ledger).isOk());
    CHECK(deferred.materialized());
    CHECK(deferred.liveObjects() == eager.liveObjects());
    CHECK(deferred.digest() == eager.digest());
  }
}

TEST_CASE("a deferred fold is unreadable until materialized", "[cluster-state]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  replay::ClusterState state;
  fold(*ledger, state, ledger->lastSeq(), true);
  CHECK_FALSE(state.materialized());
  CHECK_THROWS_AS(state.objects(replay::ObjectKind::kWorkload), std::logic_error);
  CHECK_THROWS_AS(state.digest(), std::logic_error);
  REQUIRE(state.materialize(*ledger).isOk());
  CHECK(state.materialized());
  CHECK_FALSE(state.objects(replay::ObjectKind::kWorkload).empty());
  // Every object holds the version of the seq that was noted for it.
  for (const auto& [key, obj] : state.objects(replay::ObjectKind::kWorkload)) {
    CHECK(obj->seq() <= ledger->lastSeq());
    CHECK_FALSE(obj->name().empty());
  }
}

TEST_CASE("materialize reports a record the ledger cannot give", "[cluster-state]") {
  TempDir dir;
  const std::string path = dir.path("l");
  replay::ClusterState state;
  {
    auto ledger = openLedger(path);
    ingestText(*ledger, demoStream());
    fold(*ledger, state, ledger->lastSeq(), true);
  }
  // Another ledger without those records: the pending reads fail with a status.
  auto other = openLedger(dir.path("empty"));
  Status st = state.materialize(*other);
  CHECK_FALSE(st.isOk());
  CHECK_FALSE(state.materialized());
}

TEST_CASE("objects read ahead are adopted by seq; replaced ones are dropped", "[cluster-state]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  const std::uint64_t last = ledger->lastSeq();
  const std::uint64_t middle = last / 2;
  replay::ClusterState eager;
  fold(*ledger, eager, last, false);

  // Defer to the middle, read those versions (two threads), then fold on,
  // copying: some versions read are replaced by then.
  replay::ClusterState state;
  fold(*ledger, state, middle, true);
  const std::vector<std::uint64_t> seqs = state.pendingSeqs();
  REQUIRE(std::is_sorted(seqs.begin(), seqs.end()));
  replay::ObjectReads reads(*ledger, seqs, true);
  fold(*ledger, state, last, false);
  REQUIRE(reads.finish().isOk());
  for (const auto& object : reads.objects()) REQUIRE(object != nullptr);
  REQUIRE(state.adopt(reads).isOk());
  CHECK(state.materialized());
  CHECK(state.digest() == eager.digest());

  SECTION("an object without a read version stays pending") {
    replay::ClusterState partial;
    fold(*ledger, partial, middle, true);
    std::vector<std::uint64_t> some = partial.pendingSeqs();
    REQUIRE(some.size() > 1);
    some.pop_back();
    replay::ObjectReads fewer(*ledger, some, false);
    REQUIRE(fewer.finish().isOk());
    REQUIRE(partial.adopt(fewer).isOk());
    CHECK_FALSE(partial.materialized());
    REQUIRE(partial.materialize(*ledger).isOk());
    replay::ClusterState reference;
    fold(*ledger, reference, middle, false);
    CHECK(partial.digest() == reference.digest());
  }
  SECTION("a seq the ledger does not hold fails the reads, named") {
    replay::ObjectReads missing(*ledger, {1, 2, last + 5}, true);
    const Status st = missing.finish();
    CHECK(st.code() == Status::Code::kNotFound);
    CHECK_THAT(st.message(), Catch::Contains(std::to_string(last + 5)));
  }
}
