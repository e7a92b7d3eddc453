// Usage rollups against the log's own integration, on a simulated cluster
// whose history crosses a calendar month, so hours, days and a month are all
// stored and read.
#include <random>

#include "ledger/format.h"
#include "replay/fold/checkpoints.h"
#include "replay/kueue/usage_report.h"
#include "replay/kueue/usage_rollups.h"
#include "schema/k8s/rfc3339.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

constexpr std::int64_t kHour = replay::kHourNs;

// The simulated cluster started on 2026-11-30T18:00:00Z: its history runs
// into December.
std::string monthCrossingStream(std::uint64_t seed, std::uint64_t events) {
  return simulatedStream(seed, events, 8, 4, 1796061600LL * 1000000000LL);
}

// Every row, to the nano-unit-nanosecond.
void requireSameRows(const replay::UsagePeriod& a, const replay::UsagePeriod& b) {
  REQUIRE(a.rows.size() == b.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    INFO(a.rows[i].group << " " << a.rows[i].resource);
    CHECK(a.rows[i].group == b.rows[i].group);
    CHECK(a.rows[i].resource == b.rows[i].resource);
    CHECK(a.rows[i].reserved == b.rows[i].reserved);
    CHECK(a.rows[i].quota.has_value() == b.rows[i].quota.has_value());
    if (a.rows[i].quota && b.rows[i].quota) CHECK(*a.rows[i].quota == *b.rows[i].quota);
  }
}

std::string storedRollup(const Ledger& ledger, char grain, std::int64_t start) {
  std::string value;
  REQUIRE(ledger.getRaw(format::kUsageRollupsFamily, format::usageRollupKey(grain, start), &value)
              .isOk());
  return value;
}

// The ledger the cases below share, with checkpoints and rollups written
// and verified: built once, since ingesting the stream is most of each
// case's time. A case that damages it puts back what it damaged
// (DamageUndone).
struct RollupLedger {
  TempDir dir;
  std::unique_ptr<Ledger> ledger;
  replay::RollupCoverage coverage;
  std::int64_t hour = 0;  // the hourly bucket the cases damage
  std::string original;   // its stored value
  replay::UsagePeriod truth;
};

replay::UsagePeriod reportAround(const Ledger& ledger, std::int64_t hour, std::int64_t endNs) {
  return replay::computeUsagePeriod(ledger, hour - 3 * kHour, endNs, replay::GroupBy::kClusterQueue,
                                    std::nullopt, {}, replay::ChartSteps::kOmit);
}

RollupLedger& rollupLedger() {
  static RollupLedger r;
  if (r.ledger) return r;
  auto ledger = openLedger(r.dir.path("ledger"));
  REQUIRE(ingestText(*ledger, monthCrossingStream(7, 6000)).rejected == 0);
  REQUIRE(replay::writeCheckpoints(*ledger, 2000) > 0);
  REQUIRE(replay::writeUsageRollups(*ledger) > 0);
  const auto coverage = replay::usageRollupCoverage(*ledger);
  REQUIRE(coverage);
  auto sound = replay::verifyUsageRollups(*ledger);
  CHECK(sound.firstBad.empty());
  CHECK(sound.checked > 24);
  r.coverage = *coverage;
  r.hour = coverage->endNs - 2 * kHour;
  r.original = storedRollup(*ledger, 'h', r.hour);
  r.truth = reportAround(*ledger, r.hour, coverage->endNs);
  REQUIRE(r.truth.rollupProblem.empty());
  REQUIRE(r.truth.rollupBucketsRead > 0);
  r.ledger = std::move(ledger);  // last: a failure above builds it again
  releaseAtRunEnd([] { r.ledger.reset(); });
  return r;
}

// Puts the damaged bucket back and removes the one stored outside the
// coverage, however the case ends.
class DamageUndone {
 public:
  explicit DamageUndone(RollupLedger& r) : r_(r) {}
  ~DamageUndone() {
    (void)r_.ledger->putRawForTesting(format::kUsageRollupsFamily,
                                      format::usageRollupKey('h', r_.hour), r_.original);
    (void)r_.ledger->deleteRawForTesting(format::kUsageRollupsFamily,
                                         format::usageRollupKey('d', outsideNs(r_)));
  }
  DamageUndone(const DamageUndone&) = delete;
  DamageUndone& operator=(const DamageUndone&) = delete;
  static std::int64_t outsideNs(const RollupLedger& r) { return r.coverage.endNs + 24 * kHour; }

 private:
  RollupLedger& r_;
};

}  // namespace

TEST_CASE("a report from usage rollups equals the log's integration to the nano-unit",
          "[generator][report][rollups]") {
  Ledger* ledger = rollupLedger().ledger.get();
  // Sound, whichever case ran before.
  REQUIRE(replay::verifyUsageRollups(*ledger).firstBad.empty());
  const auto coverage = replay::usageRollupCoverage(*ledger);
  REQUIRE(coverage);
  const std::int64_t first = timeOfSeq(*ledger, 1);
  const std::int64_t head = timeOfSeq(*ledger, ledger->lastSeq());
  // Hours from the first record's month to the last hour before the head.
  CHECK(coverage->startNs <= first);
  CHECK(coverage->endNs < head);
  CHECK(coverage->endNs + kHour >= head);
  // The simulated history crosses a month: a month bucket is stored.
  std::string lastMonth;
  REQUIRE(ledger->lastUsageRollup('m', &lastMonth).isOk());
  REQUIRE_FALSE(lastMonth.empty());

  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> instant(first - 3 * 24 * kHour, head + 2 * kHour);
  std::vector<std::pair<std::int64_t, std::int64_t>> periods = {
      {coverage->startNs, coverage->endNs},        // every stored hour
      {first - 24 * kHour, head + kHour},          // the whole history and more
      {format::usageRollupStart(lastMonth), head}  // a month and the open tail
  };
  for (int i = 0; i < repetitions(16); ++i) {
    std::int64_t a = instant(rng), b = instant(rng);
    if (a > b) std::swap(a, b);
    // Some on whole hours, as reports are often asked.
    if (i % 4 == 0) a = a / kHour * kHour;
    if (i % 5 == 0) b = b / kHour * kHour;
    periods.emplace_back(a, b);
  }
  const std::string someQueue = "team-01";
  std::uint64_t storedRead = 0;
  for (const auto& [from, to] : periods) {
    for (const replay::Grouping& by : {replay::Grouping(replay::GroupBy::kClusterQueue),
                                       replay::Grouping(replay::GroupBy::kNamespace),
                                       replay::parseGrouping("cluster-queue,flavor"),
                                       replay::parseGrouping("namespace,flavor")}) {
      for (const std::optional<std::string>& only :
           {std::optional<std::string>(), std::optional<std::string>(someQueue)}) {
        INFO("from " << from << " to " << to << " by " << by.text() << (only ? " one queue" : ""));
        const auto fromRollups =
            replay::computeUsagePeriod(*ledger, from, to, by, only, {}, replay::ChartSteps::kOmit,
                                       replay::UsageSource::kRollupsWhereStored);
        const auto fromLog = replay::computeUsagePeriod(
            *ledger, from, to, by, only, {}, replay::ChartSteps::kOmit, replay::UsageSource::kLog);
        CHECK(fromRollups.rollupProblem.empty());
        CHECK(fromLog.rollupBucketsRead == 0);
        storedRead += fromRollups.rollupBucketsRead;
        requireSameRows(fromRollups, fromLog);
      }
    }
  }
  // The periods were served from stored buckets, not only from the log.
  CHECK(storedRead > 100);
  const auto whole = replay::computeUsagePeriod(*ledger, coverage->startNs, coverage->endNs,
                                                replay::GroupBy::kClusterQueue, std::nullopt, {},
                                                replay::ChartSteps::kOmit);
  CHECK(whole.rows.size() > 4);
  // A month, some days and some hours at most: a few dozen buckets.
  CHECK(whole.rollupBucketsRead < 60);
}

TEST_CASE("usage rollups grow with the ledger and a series reads them",
          "[generator][report][rollups][large]") {
  TempDir dir;
  const std::string stream = monthCrossingStream(9, 8000);
  const std::size_t half = stream.find('\n', stream.size() / 2) + 1;
  auto grown = openLedger(dir.path("grown"));
  REQUIRE(ingestText(*grown, stream.substr(0, half)).rejected == 0);
  REQUIRE(replay::writeUsageRollups(*grown) > 0);
  const auto before = replay::usageRollupCoverage(*grown);
  REQUIRE(ingestText(*grown, stream.substr(half)).rejected == 0);
  REQUIRE(replay::writeUsageRollups(*grown) > 0);
  const auto after = replay::usageRollupCoverage(*grown);
  REQUIRE(before);
  REQUIRE(after);
  CHECK(after->startNs == before->startNs);
  CHECK(after->endNs > before->endNs);

  // Written in two runs or in one: the same bytes.
  auto whole = openLedger(dir.path("whole"));
  REQUIRE(ingestText(*whole, stream).rejected == 0);
  REQUIRE(replay::writeUsageRollups(*whole) > 0);
  std::map<std::string, std::string> a, b;
  REQUIRE(grown
              ->scanRaw(format::kUsageRollupsFamily,
                        [&](std::string_view k, std::string_view v) { a[std::string(k)] = v; })
              .isOk());
  REQUIRE(whole
              ->scanRaw(format::kUsageRollupsFamily,
                        [&](std::string_view k, std::string_view v) { b[std::string(k)] = v; })
              .isOk());
  // The held levels' snapshots and run ends mark where passes started and
  // ended (replay/kueue/held_record.h), and so do the wait follower's
  // states (wait_rollups.h); every other key is the same.
  std::erase_if(a, [](const auto& e) {
    return e.first[0] >= format::kHeldSnapshot || e.first[0] == format::kWaitState;
  });
  std::erase_if(b, [](const auto& e) {
    return e.first[0] >= format::kHeldSnapshot || e.first[0] == format::kWaitState;
  });
  CHECK(a.size() > 24);
  CHECK(a == b);
  CHECK(replay::verifyUsageRollups(*grown).firstBad.empty());

  // Series served from rollups equal one pass over the log, step by step.
  auto compareSeries = [&](const std::vector<std::int64_t>& boundaries) {
    std::vector<replay::UsageBucket> served;
    replay::usageSeries(*grown, boundaries, {},
                        [&](replay::UsageBucket&& bucket) { served.push_back(std::move(bucket)); });
    std::vector<replay::UsageBucket> integrated;
    replay::integrateUsage(*grown, boundaries, replay::UsageScope{}, {},
                           [&](replay::UsageBucket&& bucket) { integrated.push_back(bucket); });
    REQUIRE(served.size() == boundaries.size() - 1);
    REQUIRE(integrated.size() == served.size());
    for (std::size_t i = 0; i < served.size(); ++i) {
      INFO("step " << i);
      CHECK(served[i] == integrated[i]);
    }
  };
  // Hourly over the covered hours, then past them into the open hour.
  std::vector<std::int64_t> hourly;
  for (std::int64_t t = after->endNs - 30 * kHour; t <= after->endNs; t += kHour) {
    hourly.push_back(t);
  }
  hourly.push_back(after->endNs + kHour / 2);
  compareSeries(hourly);
  // Three-hour steps (one scan of the hours, cut every third), from a
  // moment inside an hour (its first step read from the log).
  std::vector<std::int64_t> threeHourly{after->endNs - 40 * kHour - kHour / 3};
  for (std::int64_t t = after->endNs - 39 * kHour; t <= after->endNs; t += 3 * kHour) {
    threeHourly.push_back(t);
  }
  compareSeries(threeHourly);
  // Day-long steps: each from its stored day, or its hours at the edges.
  const std::int64_t kDay = 24 * kHour;
  std::vector<std::int64_t> daily;
  for (std::int64_t t = after->startNs; t <= after->endNs; t += kDay) daily.push_back(t);
  REQUIRE(daily.size() >= 3);
  compareSeries(daily);
}

TEST_CASE("verify finds a damaged usage rollup, and a report reads around it",
          "[generator][report][rollups]") {
  RollupLedger& shared = rollupLedger();
  const DamageUndone undo(shared);
  Ledger* ledger = shared.ledger.get();
  const std::int64_t hour = shared.hour;
  const std::string& original = shared.original;
  const replay::UsagePeriod& truth = shared.truth;
  const auto report = [&] { return reportAround(*ledger, hour, shared.coverage.endNs); };
  // Every case starts from a sound ledger.
  REQUIRE(replay::verifyUsageRollups(*ledger).firstBad.empty());

  SECTION("a flipped byte fails the checksum") {
    std::string damaged = original;
    damaged[damaged.size() - 3] ^= 0x10;
    REQUIRE(ledger
                ->putRawForTesting(format::kUsageRollupsFamily, format::usageRollupKey('h', hour),
                                   damaged)
                .isOk());
    const auto v = replay::verifyUsageRollups(*ledger);
    CHECK_FALSE(v.firstBad.empty());
    CHECK(v.problem.find("checksum") != std::string::npos);
    const auto around = report();
    CHECK(around.rollupProblem.find("checksum") != std::string::npos);
    requireSameRows(around, truth);
  }
  SECTION("another bucket's value, checksum intact, differs from the log") {
    const std::string other = storedRollup(*ledger, 'h', hour - kHour);
    REQUIRE(ledger
                ->putRawForTesting(format::kUsageRollupsFamily, format::usageRollupKey('h', hour),
                                   other)
                .isOk());
    const auto v = replay::verifyUsageRollups(*ledger);
    CHECK(v.firstBad.find("hour") == 0);
    CHECK(v.problem.find("differs") != std::string::npos);
    // The report notices the misplaced bucket and reads the log instead.
    const auto around = report();
    CHECK_FALSE(around.rollupProblem.empty());
    requireSameRows(around, truth);
  }
  SECTION("a bucket deleted, or one stored outside the coverage") {
    REQUIRE(
        ledger->deleteRawForTesting(format::kUsageRollupsFamily, format::usageRollupKey('h', hour))
            .isOk());
    CHECK(replay::verifyUsageRollups(*ledger).problem == "missing");
    const auto around = report();
    CHECK(around.rollupProblem.find("missing") != std::string::npos);
    requireSameRows(around, truth);
    REQUIRE(ledger
                ->putRawForTesting(format::kUsageRollupsFamily, format::usageRollupKey('h', hour),
                                   original)
                .isOk());
    REQUIRE(replay::verifyUsageRollups(*ledger).firstBad.empty());
    REQUIRE(ledger
                ->putRawForTesting(format::kUsageRollupsFamily,
                                   format::usageRollupKey('d', DamageUndone::outsideNs(shared)),
                                   storedRollup(*ledger, 'h', hour))
                .isOk());
    CHECK(replay::verifyUsageRollups(*ledger).problem.find("outside") != std::string::npos);
  }
}

namespace {

std::int64_t at(const std::string& t) { return *tryParseRfc3339(t); }

// A timeline for the partial hours at a report's edges (usage_rollups.cpp,
// partialHour): cq holds 4 GPUs; w1 (namespace ns) holds 2 from 09:30 to
// 12:30; w2 (ns2) holds 1 from 10:05 to 10:10 and is the only holder of its
// key; lq is relabelled four times between 10:45 and 10:58 (records that
// change no usage), and w3 (ns) holds 1 from 11:30. The last record, at
// 13:30, leaves every hour up to 13:00 stored.
std::string edgeTimeline() {
  using namespace ledger::testing::k8s;
  Json spec = {{"containers", Json::array({container("c", {{"nvidia.com/gpu", "1"}})})}};
  auto withRv = [](Json o, const std::string& rv) {
    o["metadata"]["resourceVersion"] = rv;
    return o;
  };
  auto wl = [&](const std::string& ns, const std::string& name, const std::string& lq) {
    return workload(ns, name, lq, Json::array({podSet("main", 1, spec)}));
  };
  Json w1 = admitted(wl("ns", "w1", "lq"), "cq", "default", {{"nvidia.com/gpu", "2"}});
  Json w2 = admitted(wl("ns2", "w2", "lq2"), "cq", "default", {{"nvidia.com/gpu", "1"}});
  Json w3 = admitted(wl("ns", "w3", "lq"), "cq", "default", {{"nvidia.com/gpu", "1"}});
  std::string out =
      event("ADDED", resourceFlavor("default"), "2026-11-01T09:00:00Z") +
      event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"nvidia.com/gpu", 4}}}}),
            "2026-11-01T09:00:00Z") +
      event("ADDED", localQueue("ns", "lq", "cq"), "2026-11-01T09:00:00Z") +
      event("ADDED", localQueue("ns2", "lq2", "cq"), "2026-11-01T09:00:00Z") +
      event("ADDED", w1, "2026-11-01T09:30:00Z") + event("ADDED", w2, "2026-11-01T10:05:00Z") +
      event("MODIFIED", withRv(finished(w2), "2"), "2026-11-01T10:10:00Z");
  int rv = 2;
  for (const char* t : {"10:45", "10:50", "10:55", "10:58"}) {
    Json lq = withRv(localQueue("ns", "lq", "cq"), std::to_string(rv++));
    lq["metadata"]["labels"] = {{"relabelled", t}};
    out += event("MODIFIED", lq, std::string("2026-11-01T") + t + ":00Z");
  }
  return out + event("ADDED", w3, "2026-11-01T11:30:00Z") +
         event("MODIFIED", withRv(finished(w1), "2"), "2026-11-01T12:30:00Z") +
         event("ADDED", localQueue("ns", "lq3", "cq"), "2026-11-01T13:30:00Z");
}

}  // namespace

TEST_CASE("a partial hour is its stored hour less the rest, unless the rest cannot tell its keys",
          "[report][rollups]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  REQUIRE(ingestText(*ledger, edgeTimeline()).rejected == 0);
  REQUIRE(replay::writeUsageRollups(*ledger) > 0);
  REQUIRE(replay::usageRollupCoverage(*ledger)->endNs == at("2026-11-01T13:00:00Z"));
  // Each period: the hours stored in the middle, and whether its edge hour
  // is taken from the store.
  struct Case {
    const char* what;
    const char* from;
    const char* to;
    std::uint64_t storedRead;
  };
  const Case cases[] = {
      // [10:07, 11:00): the rest of its hour, [10:00, 10:07), holds one
      // record (w2 reserves), the part five: stored hour less the rest. The
      // rest names w2's key, held at 10:07.
      {"head edge from the stored hour", "2026-11-01T10:07:00Z", "2026-11-01T12:00:00Z", 2},
      // [10:40, 11:00): the rest holds w2's two records, the part four; but
      // w2's key, named by the rest, is not held at 10:40 and integrates to
      // zero over the part: the rest cannot tell whether the part names it
      // (it does not), so the part is read from the log.
      {"head edge the rest cannot settle", "2026-11-01T10:40:00Z", "2026-11-01T12:00:00Z", 1},
      // [10:00, 10:50): the rest, [10:50, 11:00), holds two records, the
      // part three; every key the rest names is held at 10:50.
      {"tail edge from the stored hour", "2026-11-01T09:00:00Z", "2026-11-01T10:50:00Z", 2},
      // [10:00, 10:20): the rest holds more records than the part.
      {"tail edge from the log", "2026-11-01T09:00:00Z", "2026-11-01T10:20:00Z", 1},
      // From before the first record: the rest of its hour, [08:00, 08:59),
      // is empty, the part holds the four records at 09:00.
      {"a period from before the history", "2026-11-01T08:59:00Z", "2026-11-01T10:00:00Z", 2},
      // The same head edge, four stored hours, and a tail past the stored
      // hours, read from the log.
      {"the whole history", "2026-11-01T08:30:00Z", "2026-11-01T13:30:00Z", 5},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    std::uint64_t storedRead = 0;
    const auto fromRollups =
        replay::usageFromRollups(*ledger, at(c.from), at(c.to), {}, &storedRead);
    replay::UsageBucket fromLog;
    replay::integrateUsage(*ledger, {at(c.from), at(c.to)}, replay::UsageScope{}, {},
                           [&](replay::UsageBucket&& b) { fromLog = std::move(b); });
    // The same keys and integrals, to the nano-unit-nanosecond.
    CHECK(fromRollups == fromLog);
    CHECK(storedRead == c.storedRead);
  }
  // The case the rest cannot settle: the log's answer does not name w2's key.
  const auto part =
      replay::usageFromRollups(*ledger, at("2026-11-01T10:40:00Z"), at("2026-11-01T11:00:00Z"));
  CHECK_FALSE(
      part.reserved.contains(replay::ReservedKey{"cq", "ns2", "default", "nvidia.com/gpu"}));
  CHECK(part.reserved.contains(replay::ReservedKey{"cq", "ns", "default", "nvidia.com/gpu"}));
}
