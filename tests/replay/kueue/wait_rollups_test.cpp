// The stored wait data against the log's own pass: `waits` from stored hours
// and states equal to workloadWaits on random periods (inside one hour,
// across the writer's passes, up to the head, by every grouping), written
// in passes or in one, verify naming a damaged, deleted or invented
// stored sample or state, and a cut (ledger-replay archive) carrying the
// follower's state so that both answer the whole history after it.
#include "replay/kueue/wait_rollups.h"

#include <capnp/serialize.h>

#include <limits>
#include <random>

#include "ledger/format.h"
#include "replay/kueue/wait_store.h"
#include "schema/k8s/rfc3339.h"
#include "schema/waits.capnp.h"
#include "tests/run_end.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"
#include "tools/archive/archive_command.h"

using namespace ledger;
using namespace ledger::testing;

namespace wait_rollups_test {

constexpr std::int64_t kWaitsHour = replay::kHourNs;
// Dense states, so a small ledger has many.
constexpr std::uint64_t kWaitsEvery = 512;

// A simulated cluster's stream in `parts` pieces cut at line ends.
std::vector<std::string> streamInParts(std::uint64_t seed, std::uint64_t events, int parts) {
  const std::string stream = simulatedStream(seed, events, 6, 4);
  std::vector<std::string> out;
  std::size_t at = 0;
  for (int i = 1; i <= parts; ++i) {
    const std::size_t end =
        i == parts ? stream.size() : stream.find('\n', stream.size() * i / parts) + 1;
    out.push_back(stream.substr(at, end - at));
    at = end;
  }
  return out;
}

void requireSameReport(const replay::WaitsReport& got, const replay::WaitsReport& expected) {
  REQUIRE(got.groups.size() == expected.groups.size());
  for (std::size_t i = 0; i < got.groups.size(); ++i) {
    INFO("group " << expected.groups[i].key);
    CHECK(got.groups[i].key == expected.groups[i].key);
    CHECK(got.groups[i].waitsNs == expected.groups[i].waitsNs);
    CHECK(got.groups[i].stillPending == expected.groups[i].stillPending);
  }
}

// The ledger the cases share: ingested in three parts, the wait data
// written after each (three writer passes), verified.
struct WaitLedger {
  TempDir dir;
  std::unique_ptr<Ledger> ledger;
  replay::WaitCoverage coverage;
  std::int64_t firstNs = 0, lastNs = 0;
};

WaitLedger& waitLedger() {
  static WaitLedger w;
  if (w.ledger) return w;
  auto ledger = openLedger(w.dir.path("ledger"));
  for (const std::string& part : streamInParts(5, 9000, 3)) {
    REQUIRE(ingestText(*ledger, part, "test", 500).rejected == 0);
    CHECK(replay::writeWaitRollups(*ledger, kWaitsEvery) > 0);
  }
  const auto coverage = replay::waitRollupCoverage(*ledger);
  REQUIRE(coverage);
  REQUIRE(coverage->endNs - coverage->startNs >= 6 * kWaitsHour);
  const auto v = replay::verifyWaitRollups(*ledger, kWaitsEvery);
  INFO(v.firstBad << ": " << v.problem);
  REQUIRE(v.firstBad.empty());
  CHECK(v.checked > 12);
  w.coverage = *coverage;
  w.firstNs = timeOfSeq(*ledger, 1);
  w.lastNs = timeOfSeq(*ledger, ledger->lastSeq());
  w.ledger = std::move(ledger);  // last: a failure above builds it again
  releaseAtRunEnd([] { w.ledger.reset(); });
  return w;
}

std::string payloadOf(const Ledger& ledger, const std::string& key) {
  std::string out;
  REQUIRE(ledger
              .scanUsageRollups(key, key + '\0',
                                [&](std::string_view, kj::ArrayPtr<const capnp::word> words) {
                                  auto bytes = words.asBytes();
                                  out.assign(bytes.begin(), bytes.end());
                                  return false;
                                })
              .isOk());
  return out;
}

std::vector<replay::WaitSample> samplesOf(const std::string& payload) {
  const auto words = kj::arrayPtr(reinterpret_cast<const capnp::word*>(payload.data()),
                                  payload.size() / sizeof(capnp::word));
  capnp::FlatArrayMessageReader reader(words);
  std::vector<replay::WaitSample> out;
  for (auto s : reader.getRoot<schema::WaitHour>().getSamples()) {
    out.push_back({s.getClusterQueue().cStr(), s.getNamespace().cStr(), s.getLocalQueue().cStr(),
                   s.getWaitNs(), 0});
  }
  return out;
}

// Puts the stored value of `key` back, however the case ends.
class Restored {
 public:
  Restored(Ledger& ledger, std::string key)
      : ledger_(ledger), key_(std::move(key)), raw_(rawOf(ledger, key_)) {}
  ~Restored() {
    if (raw_.empty()) {
      (void)ledger_.deleteRawForTesting(format::kUsageRollupsFamily, key_);
    } else {
      (void)ledger_.putRawForTesting(format::kUsageRollupsFamily, key_, raw_);
    }
  }
  Restored(const Restored&) = delete;
  Restored& operator=(const Restored&) = delete;
  static std::string rawOf(const Ledger& ledger, const std::string& key) {
    std::string value;
    const Status st = ledger.getRaw(format::kUsageRollupsFamily, key, &value);
    return st.isOk() ? value : std::string();
  }

 private:
  Ledger& ledger_;
  std::string key_;
  std::string raw_;
};

}  // namespace wait_rollups_test

using namespace wait_rollups_test;

TEST_CASE("waits from stored hours and states equal the log's pass on random periods",
          "[generator][rollups][waits][large]") {
  WaitLedger& w = waitLedger();
  const Ledger& ledger = *w.ledger;
  std::mt19937_64 rng(11);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const std::int64_t hours = (w.coverage.endNs - w.coverage.startNs) / kWaitsHour;
  std::uint64_t hoursRead = 0, admissions = 0, pending = 0;
  for (int i = 0; i < repetitions(48); ++i) {
    std::int64_t from = 0, to = 0;
    switch (i % 4) {
      case 0: {  // inside one stored hour
        const std::int64_t h = w.coverage.startNs + uniform(0, hours - 1) * kWaitsHour;
        from = h + uniform(0, kWaitsHour - 2);
        to = uniform(from + 1, h + kWaitsHour);
        break;
      }
      case 1:  // anywhere, before the first record to after the last
        from = uniform(w.firstNs - kWaitsHour, w.lastNs);
        to = uniform(from + 1, w.lastNs + kWaitsHour);
        break;
      case 2:  // up to the head
        from = uniform(w.firstNs - kWaitsHour, w.lastNs);
        to = w.lastNs + 1;
        break;
      default:  // whole hours
        from = w.coverage.startNs + uniform(0, hours - 1) * kWaitsHour;
        to = uniform(from / kWaitsHour + 1, w.coverage.endNs / kWaitsHour + 2) * kWaitsHour;
        break;
    }
    // Every grouping on each period; under a sanitizer, where the log's pass
    // costs many times more, one, in turn.
    const replay::WaitGrouping groupings[] = {replay::WaitGrouping::kClusterQueue,
                                              replay::WaitGrouping::kNamespace,
                                              replay::WaitGrouping::kLocalQueue};
    for (int g = 0; g < 3; ++g) {
      if (kSanitizerBuild && g != i % 3) continue;
      const replay::WaitGrouping by = groupings[g];
      INFO("period " << from << " " << to << " by " << replay::waitGroupingText(by));
      std::string problem;
      const auto got = replay::waitsFromRollups(ledger, from, to, by, &hoursRead, &problem);
      CHECK(problem.empty());
      const auto expected = replay::workloadWaits(ledger, from, to, by);
      requireSameReport(got, expected);
      for (const auto& g : expected.groups) {
        admissions += g.waitsNs.size();
        pending += g.stillPending;
      }
    }
  }
  // The periods read stored hours, and the cluster had waits to compare.
  CHECK(hoursRead > 0);
  CHECK(admissions > 100);
  CHECK(pending > 0);
  // The whole history.
  const auto all = replay::waitsFromRollups(ledger, std::numeric_limits<std::int64_t>::min() / 2,
                                            std::numeric_limits<std::int64_t>::max() / 2,
                                            replay::WaitGrouping::kClusterQueue);
  requireSameReport(all, replay::workloadWaits(ledger, std::numeric_limits<std::int64_t>::min() / 2,
                                               std::numeric_limits<std::int64_t>::max() / 2,
                                               replay::WaitGrouping::kClusterQueue));
}

TEST_CASE("wait data written in passes is the bytes of one pass, and the rollups' writer writes it",
          "[generator][rollups][waits][large]") {
  TempDir dir;
  const auto parts = streamInParts(6, 4000, 2);
  auto grown = openLedger(dir.path("grown"));
  auto whole = openLedger(dir.path("whole"));
  REQUIRE(ingestText(*grown, parts[0], "test", 500).rejected == 0);
  REQUIRE(replay::writeWaitRollups(*grown, kWaitsEvery) > 0);
  REQUIRE(ingestText(*grown, parts[1], "test", 500).rejected == 0);
  REQUIRE(replay::writeWaitRollups(*grown, kWaitsEvery) > 0);
  REQUIRE(ingestText(*whole, parts[0] + parts[1], "test", 500).rejected == 0);
  REQUIRE(replay::writeWaitRollups(*whole, kWaitsEvery) > 0);
  // Nothing new: nothing written.
  CHECK(replay::writeWaitRollups(*whole, kWaitsEvery) == 0);
  auto stored = [](const Ledger& l) {
    std::map<std::string, std::string> out;
    REQUIRE(l.scanRaw(format::kUsageRollupsFamily, [&](std::string_view k, std::string_view v) {
               // The hours, and the states at the stride (a pass also stores
               // one where it ends).
               if (k[0] == format::kWaitHour ||
                   (k[0] == format::kWaitState && format::heldRecordSeq(k) % kWaitsEvery == 0))
                 out[std::string(k)] = v;
             }).isOk());
    return out;
  };
  const auto a = stored(*grown);
  CHECK(a.size() > 12);
  CHECK(a == stored(*whole));
  CHECK(replay::verifyWaitRollups(*grown, kWaitsEvery).firstBad.empty());

  // writeUsageRollups writes them too, and its verify checks them.
  auto rolled = openLedger(dir.path("rolled"));
  REQUIRE(ingestText(*rolled, parts[0] + parts[1], "test", 500).rejected == 0);
  REQUIRE(replay::writeUsageRollups(*rolled) > 0);
  const auto coverage = replay::waitRollupCoverage(*rolled);
  REQUIRE(coverage);
  CHECK(coverage->endNs == replay::waitRollupCoverage(*whole)->endNs);
  const auto v = replay::verifyUsageRollups(*rolled);
  CHECK(v.firstBad.empty());
  REQUIRE(rolled
              ->putUsageRollups({{format::waitHourKey(coverage->startNs),
                                  replay::encodeWaitHour({{"cq", "ns", "lq", 7, 0}}, 1)}})
              .isOk());
  CHECK(replay::verifyUsageRollups(*rolled).firstBad ==
        replay::describeWaitKey(format::waitHourKey(coverage->startNs)));
}

TEST_CASE(
    "verify names a damaged, deleted or invented stored sample or state, and waits read "
    "around it",
    "[generator][rollups][waits]") {
  WaitLedger& w = waitLedger();
  Ledger& ledger = *w.ledger;
  // An hour with admissions, inside the coverage.
  std::int64_t hour = w.coverage.startNs + kWaitsHour;
  while (samplesOf(payloadOf(ledger, format::waitHourKey(hour))).size() < 2) hour += kWaitsHour;
  REQUIRE(hour + kWaitsHour < w.coverage.endNs);
  const std::string hourKey = format::waitHourKey(hour);
  const std::uint64_t stateSeq = 2 * kWaitsEvery;
  const std::string stateKey = format::waitStateKey(stateSeq);
  const Restored undoHour(ledger, hourKey), undoState(ledger, stateKey);
  const std::uint64_t pastSeq = ledger.lastSeq() + 1;
  const Restored undoPast(ledger, format::waitStateKey(pastSeq));
  // A period whose answer reads the hour and replays from the state.
  const std::int64_t from = hour - kWaitsHour / 3, to = hour + 2 * kWaitsHour + kWaitsHour / 4;
  const auto truth = replay::workloadWaits(ledger, from, to, replay::WaitGrouping::kLocalQueue);
  auto answer = [&](std::string* problem) {
    return replay::waitsFromRollups(ledger, from, to, replay::WaitGrouping::kLocalQueue, nullptr,
                                    problem);
  };
  auto verify = [&] { return replay::verifyWaitRollups(ledger, kWaitsEvery); };
  REQUIRE(verify().firstBad.empty());

  SECTION("a flipped byte fails the checksum") {
    std::string raw = Restored::rawOf(ledger, hourKey);
    raw[raw.size() - 3] ^= 0x10;
    REQUIRE(ledger.putRawForTesting(format::kUsageRollupsFamily, hourKey, raw).isOk());
    CHECK(verify().problem.find("checksum") != std::string::npos);
    std::string problem;
    requireSameReport(answer(&problem), truth);
    CHECK(problem.find("checksum") != std::string::npos);
  }
  SECTION("a sample invented, or one deleted") {
    auto samples = samplesOf(payloadOf(ledger, hourKey));
    SECTION("invented") { samples.push_back(samples.front()); }
    SECTION("deleted") { samples.pop_back(); }
    REQUIRE(ledger.putUsageRollups({{hourKey, replay::encodeWaitHour(samples, 1)}}).isOk());
    const auto v = verify();
    CHECK(v.firstBad == replay::describeWaitKey(hourKey));
    CHECK(v.problem == "differs from a fresh pass over the log");
  }
  SECTION("an hour deleted") {
    REQUIRE(ledger.deleteRawForTesting(format::kUsageRollupsFamily, hourKey).isOk());
    const auto v = verify();
    CHECK(v.firstBad == replay::describeWaitKey(hourKey));
    CHECK(v.problem == "missing");
    std::string problem;
    requireSameReport(answer(&problem), truth);
    CHECK(problem.find("missing") != std::string::npos);
  }
  SECTION("a state damaged, deleted, or invented after the last record") {
    SECTION("another state's bytes") {
      const std::string other = payloadOf(ledger, format::waitStateKey(stateSeq + kWaitsEvery));
      REQUIRE(ledger.putUsageRollups({{stateKey, other}}).isOk());
      CHECK(verify().problem == "differs from a fresh pass over the log");
    }
    SECTION("deleted") {
      REQUIRE(ledger.deleteRawForTesting(format::kUsageRollupsFamily, stateKey).isOk());
      CHECK(verify().problem == "missing");
    }
    SECTION("undecodable") {
      REQUIRE(ledger.putUsageRollups({{stateKey, std::string(16, '\x7f')}}).isOk());
      CHECK(verify().problem.find("does not decode") != std::string::npos);
    }
    SECTION("after the last record") {
      const std::string pastKey = format::waitStateKey(pastSeq);
      REQUIRE(ledger.putUsageRollups({{pastKey, payloadOf(ledger, stateKey)}}).isOk());
      const auto v = verify();
      CHECK(v.firstBad == replay::describeWaitKey(pastKey));
      CHECK(v.problem == "stored after the last record");
      return;
    }
    CHECK(verify().firstBad == replay::describeWaitKey(stateKey));
  }
}

TEST_CASE("a format 6 ledger answers waits from the log until its next rollup pass writes the data",
          "[generator][rollups][waits]") {
  TempDir dir;
  const std::string path = dir.path("l");
  {
    auto ledger = openLedger(path);
    REQUIRE(ingestText(*ledger, streamInParts(4, 3000, 1)[0], "test", 500).rejected == 0);
  }
  makeEarlierFormat(path, "6", {});
  auto ledger = openLedger(path);
  CHECK(ledger->formatVersion() == format::kCurrentFormat);
  CHECK(format::kCurrentFormat >= 7);
  const std::int64_t first = timeOfSeq(*ledger, 1), last = timeOfSeq(*ledger, ledger->lastSeq());
  const std::int64_t from = first + (last - first) / 4, to = last - (last - first) / 4;
  const auto truth = replay::workloadWaits(*ledger, from, to, replay::WaitGrouping::kNamespace);
  std::uint64_t hoursRead = 0;
  CHECK_FALSE(replay::waitRollupCoverage(*ledger));
  requireSameReport(
      replay::waitsFromRollups(*ledger, from, to, replay::WaitGrouping::kNamespace, &hoursRead),
      truth);
  CHECK(hoursRead == 0);
  REQUIRE(replay::writeUsageRollups(*ledger) > 0);
  REQUIRE(replay::waitRollupCoverage(*ledger));
  requireSameReport(
      replay::waitsFromRollups(*ledger, from, to, replay::WaitGrouping::kNamespace, &hoursRead),
      truth);
  CHECK(hoursRead > 0);
  CHECK(replay::verifyUsageRollups(*ledger).firstBad.empty());
}

TEST_CASE(
    "a cut carries the wait follower's state: after it, stored data and the log's pass "
    "answer the whole history",
    "[generator][rollups][waits][archive]") {
  TempDir dir;
  // Smaller under a sanitizer: each of the three sections runs the whole
  // set-up again, and it still stores hours on both sides of the cut.
  const auto parts = streamInParts(6, kSanitizerBuild ? 5000 : 8000, 4);
  auto ledger = openLedger(dir.path("l"));
  for (int i = 0; i < 3; ++i)
    REQUIRE(ingestText(*ledger, parts[static_cast<std::size_t>(i)], "test", 500).rejected == 0);
  REQUIRE(replay::writeUsageRollups(*ledger) > 0);
  const auto coverage = replay::waitRollupCoverage(*ledger);
  REQUIRE(coverage);
  REQUIRE(coverage->endNs - coverage->startNs >= (kSanitizerBuild ? 2 : 4) * kWaitsHour);
  const std::int64_t cutNs = coverage->startNs + (coverage->endNs - coverage->startNs) / 2 + 1234;
  const std::int64_t lastNs = timeOfSeq(*ledger, ledger->lastSeq());
  // Before the cut: a period after it (partial edges), one from the first
  // stored hour across it, and the whole history.
  const std::vector<std::pair<std::int64_t, std::int64_t>> periods = {
      {cutNs + kWaitsHour + 777, lastNs - 555},
      {coverage->startNs, cutNs + 2 * kWaitsHour + 99},
      {coverage->startNs, lastNs + 1}};
  std::vector<replay::WaitsReport> truth;
  for (const auto& [from, to] : periods)
    truth.push_back(replay::workloadWaits(*ledger, from, to, replay::WaitGrouping::kLocalQueue));
  std::size_t before = 0;  // admissions before the stored hours' end
  for (const auto& g : replay::workloadWaits(*ledger, coverage->startNs, coverage->endNs,
                                             replay::WaitGrouping::kClusterQueue)
                           .groups)
    before += g.waitsNs.size();
  REQUIRE(before > 0);

  cli::ArchiveRequest request{formatRfc3339(cutNs), dir.path("archive"), {}, 0, true};
  const cli::ArchiveOutcome cut = cli::archiveBefore(*ledger, cutNs, request);
  REQUIRE(cut.cut.seq > 0);
  REQUIRE(ledger->firstSeq() == cut.cut.seq + 1);
  CHECK(replay::waitOrigin(*ledger) == 1);
  REQUIRE(replay::waitRollupCoverage(*ledger));

  for (std::size_t i = 0; i < periods.size(); ++i) {
    INFO("period " << i);
    std::uint64_t hoursRead = 0;
    std::string problem;
    requireSameReport(
        replay::waitsFromRollups(*ledger, periods[i].first, periods[i].second,
                                 replay::WaitGrouping::kLocalQueue, &hoursRead, &problem),
        truth[i]);
    CHECK(problem.empty());
    CHECK(hoursRead > 0);
  }
  // The log's pass starts from the carried state: the period after the cut
  // is the whole history's answer from the records after it alone.
  requireSameReport(replay::workloadWaits(*ledger, periods[0].first, periods[0].second,
                                          replay::WaitGrouping::kLocalQueue),
                    truth[0]);
  // The daemon's restore hands out every stored hour's admissions, those
  // of archived records among them.
  replay::WaitFollower follower(replay::WaitGrouping::kClusterQueue);
  std::size_t handed = 0;
  const auto resume = replay::resumeWaits(*ledger, ledger->lastSeq(), follower,
                                          [&](const replay::WaitSample&) { ++handed; });
  REQUIRE(resume);
  CHECK(handed == before);

  auto v = replay::verifyWaitRollups(*ledger);
  INFO(v.firstBad << ": " << v.problem);
  CHECK(v.firstBad.empty());
  CHECK_FALSE(v.notRead);
  CHECK(v.carried > 1);  // the state at the cut and the hours up to it
  CHECK(v.checked > 0);

  SECTION("the writer goes on after the cut") {
    REQUIRE(ingestText(*ledger, parts[3], "test", 500).rejected == 0);
    REQUIRE(replay::writeUsageRollups(*ledger) > 0);
    const auto grown = replay::waitRollupCoverage(*ledger);
    REQUIRE(grown);
    CHECK(grown->endNs > coverage->endNs);
    const std::int64_t to = timeOfSeq(*ledger, ledger->lastSeq()) + 1;
    std::uint64_t hoursRead = 0;
    requireSameReport(
        replay::waitsFromRollups(*ledger, periods[0].first, to, replay::WaitGrouping::kNamespace,
                                 &hoursRead),
        replay::workloadWaits(*ledger, periods[0].first, to, replay::WaitGrouping::kNamespace));
    CHECK(hoursRead > 0);
    v = replay::verifyWaitRollups(*ledger);
    CHECK(v.firstBad.empty());
  }
  SECTION("without the carried state (a cut by an earlier build), the records after the cut") {
    const std::string carried = format::waitStateKey(cut.cut.seq);
    REQUIRE(ledger->deleteRawForTesting(format::kUsageRollupsFamily, carried).isOk());
    CHECK(replay::waitOrigin(*ledger) == ledger->firstSeq());
    CHECK_FALSE(replay::waitRollupCoverage(*ledger));
    std::uint64_t hoursRead = 0;
    const auto fromLog = replay::waitsFromRollups(*ledger, periods[0].first, periods[0].second,
                                                  replay::WaitGrouping::kLocalQueue, &hoursRead);
    CHECK(hoursRead == 0);
    requireSameReport(fromLog, replay::workloadWaits(*ledger, periods[0].first, periods[0].second,
                                                     replay::WaitGrouping::kLocalQueue));
    CHECK(replay::verifyWaitRollups(*ledger).notRead);
  }
  SECTION("a damaged carried state is named by verify") {
    const std::string carried = format::waitStateKey(cut.cut.seq);
    REQUIRE(ledger->putUsageRollups({{carried, std::string(16, '\x7f')}}).isOk());
    v = replay::verifyWaitRollups(*ledger);
    CHECK(v.firstBad == replay::describeWaitKey(carried));
    CHECK(v.problem.find("does not decode") != std::string::npos);
  }
}
