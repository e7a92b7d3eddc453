// ClusterState's two ways of folding: copying every record (apply) and
// noting record seqs, then reading the survivors once (applyDeferred +
// materialize, what Replayer does). They must agree on every seq.
#include <fstream>

#include "cluster_state.h"
#include "test_support.h"

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
