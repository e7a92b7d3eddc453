#include "replay/kueue/held_record.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "ledger/format.h"
#include "replay/fold/checkpoints.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/usage_levels.h"
#include "replay/kueue/usage_rollups.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"

using namespace ledger;
using namespace ledger::testing;

namespace held_record_test {

constexpr std::int64_t kHour = replay::kHourNs;

std::map<std::string, std::string> rollupFamily(const Ledger& ledger) {
  std::map<std::string, std::string> out;
  REQUIRE(ledger
              .scanRaw(format::kUsageRollupsFamily,
                       [&](std::string_view k, std::string_view v) { out[std::string(k)] = v; })
              .isOk());
  return out;
}

struct Integrated {
  std::vector<replay::UsageBucket> buckets;
  replay::UsageSteps steps;
};

Integrated integrate(const Ledger& ledger, const std::vector<std::int64_t>& boundaries,
                     bool readStored) {
  Integrated out;
  replay::integrateUsage(
      ledger, boundaries, replay::UsageScope{}, {},
      [&](replay::UsageBucket&& b) { out.buckets.push_back(std::move(b)); }, &out.steps, nullptr,
      replay::HeldLevelsUse{readStored, nullptr});
  return out;
}

void requireSameSteps(const replay::UsageSteps& a, const replay::UsageSteps& b) {
  REQUIRE(a.held.size() == b.held.size());
  for (auto ia = a.held.begin(), ib = b.held.begin(); ia != a.held.end(); ++ia, ++ib) {
    INFO(ia->first.first << " " << ia->first.second);
    REQUIRE(ia->first == ib->first);
    REQUIRE(ia->second.size() == ib->second.size());
    for (std::size_t i = 0; i < ia->second.size(); ++i) {
      CHECK(ia->second[i].timeNs == ib->second[i].timeNs);
      CHECK(ia->second[i].value == ib->second[i].value);
    }
  }
}

// The held integrals of every bucket, to tell a period that held nothing.
bool anyHeld(const std::vector<replay::UsageBucket>& buckets) {
  for (const auto& b : buckets) {
    for (const auto& [key, integrals] : b.reserved) {
      if (!(integrals.held == replay::Integral())) return true;
    }
  }
  return false;
}

TEST_CASE("stored held levels answer as following the records does, for any period",
          "[generator][rollups][held]") {
  TempDir dir;
  const std::string stream = simulatedStream(21, 3000, 8, 4);
  const std::size_t half = stream.find('\n', stream.size() / 2) + 1;
  auto ledger = openLedger(dir.path("ledger"));
  // Written in two passes, as the daemon writes them: the second goes on
  // from where the first ended, inside the hour the first head was in.
  REQUIRE(ingestText(*ledger, stream.substr(0, half)).rejected == 0);
  REQUIRE(replay::writeCheckpoints(*ledger, 1000) > 0);
  replay::writeUsageRollups(*ledger);
  const std::uint64_t firstHead = ledger->lastSeq();
  const replay::Replayer replayer(*ledger);
  const auto firstCoverage = replay::usageRollupCoverage(*ledger);
  REQUIRE(firstCoverage);
  // The first pass's held levels reach its head, past its last whole hour.
  CHECK(replay::StoredHeldLevels::open(*ledger, replayer.seqAt(firstCoverage->endNs), firstHead) !=
        nullptr);
  REQUIRE(ingestText(*ledger, stream.substr(half)).rejected == 0);
  REQUIRE(replay::writeCheckpoints(*ledger, 1000) > 0);
  replay::writeUsageRollups(*ledger);
  const std::uint64_t head = ledger->lastSeq();
  // One run over both passes.
  CHECK(replay::StoredHeldLevels::open(*ledger, 1, head) != nullptr);
  CHECK(replay::verifyUsageRollups(*ledger).firstBad.empty());

  // The same bytes as one pass writes, but for where passes started and
  // ended (snapshots, run ends, and the wait follower's states, stored
  // where a pass's whole hours end).
  auto whole = openLedger(dir.path("whole"));
  REQUIRE(ingestText(*whole, stream).rejected == 0);
  REQUIRE(replay::writeCheckpoints(*whole, 1000) > 0);
  replay::writeUsageRollups(*whole);
  auto a = rollupFamily(*ledger);
  auto b = rollupFamily(*whole);
  std::erase_if(a, [](const auto& e) {
    return e.first[0] >= format::kHeldSnapshot || e.first[0] == format::kWaitState;
  });
  std::erase_if(b, [](const auto& e) {
    return e.first[0] >= format::kHeldSnapshot || e.first[0] == format::kWaitState;
  });
  CHECK(std::count_if(a.begin(), a.end(),
                      [](const auto& e) { return e.first[0] == format::kHeldChanges; }) > 100);
  CHECK(a == b);

  // Random periods and steps, inside hours and across the last whole hour
  // into the open one: buckets and held steps equal to the nano-unit.
  const std::int64_t first = timeOfSeq(*ledger, 1);
  const std::int64_t last = timeOfSeq(*ledger, head);
  std::mt19937_64 rng(5);
  int served = 0;
  bool held = false;
  for (int round = 0; round < 12; ++round) {
    std::uniform_int_distribution<std::int64_t> pick(first, last);
    std::int64_t from = pick(rng);
    std::int64_t to = pick(rng);
    if (from > to) std::swap(from, to);
    if (round == 0) to = last;  // up to the head, as "now" asks
    const std::int64_t step = std::max<std::int64_t>((to - from) / 7, kHour / 60);
    std::vector<std::int64_t> boundaries;
    for (std::int64_t t = from; t < to; t += step) boundaries.push_back(t);
    boundaries.push_back(to);
    if (boundaries.size() < 2) continue;
    INFO("round " << round << " from " << from << " to " << to);
    if (replay::StoredHeldLevels::open(*ledger, replayer.seqAt(from), replayer.seqAt(to))) ++served;
    const Integrated stored = integrate(*ledger, boundaries, true);
    const Integrated followed = integrate(*ledger, boundaries, false);
    REQUIRE(stored.buckets.size() == followed.buckets.size());
    for (std::size_t i = 0; i < stored.buckets.size(); ++i) {
      INFO("bucket " << i);
      CHECK(stored.buckets[i] == followed.buckets[i]);
    }
    requireSameSteps(stored.steps, followed.steps);
    held = held || anyHeld(followed.buckets);
  }
  CHECK(served >= 11);  // the stored levels, not the records, answered
  CHECK(held);          // and the periods held devices
}

TEST_CASE("verify names a damaged, a missing or an invented held level",
          "[generator][rollups][held]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  REQUIRE(ingestText(*ledger, simulatedStream(23, 1500, 8, 4)).rejected == 0);
  REQUIRE(replay::writeCheckpoints(*ledger, 1000) > 0);
  replay::writeUsageRollups(*ledger);
  REQUIRE(replay::verifyUsageRollups(*ledger).firstBad.empty());
  std::vector<std::pair<std::string, std::string>> changes;
  for (const auto& [k, v] : rollupFamily(*ledger)) {
    if (k[0] == format::kHeldChanges) changes.emplace_back(k, v);
  }
  REQUIRE(changes.size() > 10);
  const auto& [key, value] = changes[changes.size() / 2];
  const std::string name = "held changes after seq " + std::to_string(format::heldRecordSeq(key));

  SECTION("another record's levels in its place") {
    REQUIRE(ledger->putRawForTesting(format::kUsageRollupsFamily, key, changes[1].second).isOk());
    const auto v = replay::verifyUsageRollups(*ledger);
    CHECK(v.firstBad == name);
    CHECK(v.problem == "differs from what the records give");
  }
  SECTION("deleted inside a run") {
    REQUIRE(ledger->deleteRawForTesting(format::kUsageRollupsFamily, key).isOk());
    const auto v = replay::verifyUsageRollups(*ledger);
    CHECK(v.firstBad == name);
    CHECK(v.problem == "missing");
  }
  SECTION("stored after a record that changed no holding") {
    std::uint64_t seq = format::heldRecordSeq(key) + 1;
    while (std::any_of(changes.begin(), changes.end(),
                       [&](const auto& c) { return format::heldRecordSeq(c.first) == seq; }))
      ++seq;
    const std::string invented = format::heldRecordKey(format::kHeldChanges, seq);
    REQUIRE(ledger->putRawForTesting(format::kUsageRollupsFamily, invented, value).isOk());
    const auto v = replay::verifyUsageRollups(*ledger);
    CHECK(v.firstBad == "held changes after seq " + std::to_string(seq));
    CHECK(v.problem == "stored where the records changed no holding");
  }
}

}  // namespace held_record_test
