// Replay over a simulated cluster large enough to take every path a query
// takes at scale: a long fold that defers and reads the survivors afterwards,
// a short fold after a checkpoint that keeps records as they pass, and more
// pending objects than one lookup batch, read in two halves at once.
#include "replay/fold/checkpoints.h"
#include "replay/fold/replayer.h"
#include "replay/fold/scan_ahead.h"
#include "replay/kueue/usage_report.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

// 64 nodes publish 576 ResourceSlices: more live objects than materialize
// reads on one thread.
std::string generate(std::uint64_t events) { return simulatedStream(11, events, 64, 4); }

// The large cluster's ledger, shared by the tests below: ingesting the
// stream is most of their time, and none changes what the others read
// (checkpoints only add a way to the same states). The folds read its first
// kFolded records, which are the generator's stream of that many events (a
// stream begins with every shorter one of its seed: cluster_sim_test.cpp);
// the usage test reads all kRecords (fewer under a sanitizer, where the
// ingest is most of the time; still past kFolded).
constexpr std::uint64_t kRecords = kSanitizerBuild ? 8000 : 12000;
constexpr std::uint64_t kFolded = 6000;

struct LargeCluster {
  TempDir dir;
  std::unique_ptr<Ledger> ledger;
  std::uint64_t last = 0;
  // The reference for the folds: every record up to kFolded copied as it is
  // folded, nothing read back. Each digest kept is a fold from scratch.
  std::map<std::uint64_t, Digest> expected;
  std::size_t liveAtEnd = 0;
};

LargeCluster& largeCluster() {
  static LargeCluster c;
  if (c.ledger) return c;
  auto ledger = openLedger(c.dir.path("ledger"));
  const IngestOutcome out = ingestText(*ledger, generate(kRecords));
  REQUIRE(out.rejected == 0);
  c.last = ledger->lastSeq();
  const std::uint64_t kDigestEvery = kFolded / static_cast<std::uint64_t>(repetitions(12));
  replay::ClusterState eager;
  REQUIRE(ledger
              ->scanProjectionWords(1, kFolded,
                                    [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
                                      eager.apply(seq, w);
                                      if (seq % kDigestEvery == 0 || seq == kFolded || seq == 4097)
                                        c.expected[seq] = eager.digest();
                                      return true;
                                    })
              .isOk());
  c.liveAtEnd = eager.liveObjects();
  c.ledger = std::move(ledger);  // last: a failure above builds it again
  releaseAtRunEnd([] { c.ledger.reset(); });
  return c;
}

}  // namespace

TEST_CASE("folds of a large simulated cluster agree on every path", "[generator][replay]") {
  LargeCluster& cluster = largeCluster();
  Ledger* ledger = cluster.ledger.get();
  const std::uint64_t last = kFolded;
  const std::map<std::uint64_t, Digest>& expected = cluster.expected;
  REQUIRE(cluster.last == kRecords);
  REQUIRE(cluster.liveAtEnd > 1024);

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
    REQUIRE(replay::writeCheckpoints(*ledger, 2000) == kRecords / 2000);
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
    TempDir dir;
    auto empty = openLedger(dir.path("empty"));
    const Status st = state.materialize(*empty);
    CHECK(st.code() == Status::Code::kNotFound);
    CHECK_FALSE(state.materialized());
    // The same state reads its records from the right ledger afterwards.
    REQUIRE(state.materialize(*ledger).isOk());
    CHECK(state.digest() == expected.at(last));
  }
}

TEST_CASE("a long period's usage is the sum of its short parts", "[generator][report]") {
  // The whole period is read on a second thread (more than kShortScanRecords
  // records), each part on one: integrals are exact, so the sums agree to
  // the nano-unit-second.
  Ledger* ledger = largeCluster().ledger.get();
  const std::uint64_t last = ledger->lastSeq();
  std::vector<std::int64_t> cuts;
  for (std::uint64_t seq :
       {std::uint64_t{1}, std::uint64_t{3000}, std::uint64_t{6000}, std::uint64_t{9000}, last}) {
    if (seq > last) continue;  // a sanitizer's smaller cluster
    std::int64_t t = 0;
    REQUIRE(ledger->timeOf(seq, &t).isOk());
    cuts.push_back(t);
  }
  // "12.000000001" resource-seconds -> 12000000001 nano-unit-seconds.
  auto nanos = [](const std::string& seconds) {
    Int128 v = 0;
    for (char c : seconds) {
      if (c != '.') v = v * 10 + (c - '0');
    }
    return v;
  };
  using Sums = std::map<std::pair<std::string, std::string>, std::pair<Int128, Int128>>;
  auto sums = [&](const replay::UsagePeriod& p, Sums& into) {
    for (const auto& row : p.rows) {
      auto& [reserved, quota] = into[{row.group, row.resource}];
      reserved += nanos(row.reserved.seconds());
      if (row.quota) quota += nanos(row.quota->seconds());
    }
  };
  Sums whole, parts;
  const auto all = replay::computeUsagePeriod(*ledger, cuts.front(), cuts.back(),
                                              replay::GroupBy::kClusterQueue, std::nullopt);
  REQUIRE(all.toSeq - all.fromSeq > replay::kShortScanRecords);
  sums(all, whole);
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const auto part = replay::computeUsagePeriod(*ledger, cuts[i], cuts[i + 1],
                                                 replay::GroupBy::kClusterQueue, std::nullopt);
    CHECK(part.toSeq - part.fromSeq < replay::kShortScanRecords);
    sums(part, parts);
  }
  // Rows with nothing reserved in a part are still rows of that part.
  for (auto it = parts.begin(); it != parts.end();) {
    it = it->second == std::pair<Int128, Int128>{0, 0} && !whole.count(it->first) ? parts.erase(it)
                                                                                  : std::next(it);
  }
  CHECK(whole.size() > 4);
  CHECK(parts == whole);
}
