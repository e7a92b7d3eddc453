// The daemon's waits per ClusterQueue: Kueue's buckets, and the histogram
// followed commit by commit equal to `ledger-query waits` over the history.
#include "tools/watch/admission_waits.h"

#include <catch2/catch.hpp>
#include <limits>

#include "replay/kueue/workload_waits.h"
#include "tests/test_support.h"

using namespace ledger;

namespace admission_waits_test {

constexpr std::int64_t kSecond = 1'000'000'000;

bool hasLine(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

}  // namespace admission_waits_test

namespace awt = admission_waits_test;

TEST_CASE("admission waits fall into Kueue's buckets, upper bounds inclusive") {
  cli::AdmissionWaits waits;
  CHECK(waits.metricsText().empty());
  waits.observe("team-a", 1 * awt::kSecond);      // le="1"
  waits.observe("team-a", 3 * awt::kSecond);      // le="5"
  waits.observe("team-a", 20000 * awt::kSecond);  // past 10240: +Inf only
  const std::string text = waits.metricsText();
  CHECK(awt::hasLine(text, "# TYPE ledger_admission_wait_time_seconds histogram"));
  CHECK(awt::hasLine(
      text, R"(ledger_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="1"} 1)"));
  CHECK(awt::hasLine(
      text, R"(ledger_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="2.5"} 1)"));
  CHECK(awt::hasLine(
      text, R"(ledger_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="5"} 2)"));
  CHECK(awt::hasLine(
      text, R"(ledger_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="10240"} 2)"));
  CHECK(awt::hasLine(
      text, R"(ledger_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="+Inf"} 3)"));
  CHECK(awt::hasLine(text,
                     R"(ledger_admission_wait_time_seconds_sum{cluster_queue="team-a"} 20004)"));
  CHECK(
      awt::hasLine(text, R"(ledger_admission_wait_time_seconds_count{cluster_queue="team-a"} 3)"));
  CHECK(awt::hasLine(text, R"(ledger_pending_workloads{cluster_queue="team-a"} 0)"));
  CHECK(cli::kAdmissionWaitBuckets.front() == 1);
  CHECK(cli::kAdmissionWaitBuckets[1] == 2.5);
  CHECK(cli::kAdmissionWaitBuckets.back() == 2.5 * (1 << 12));
}

TEST_CASE("admission waits followed commit by commit are `waits` over the whole history") {
  ledger::testing::TempDir dir;
  auto ledger = ledger::testing::openLedger(dir.path("l"));
  ledger::testing::ingestText(*ledger, ledger::testing::demoStream());
  const std::uint64_t last = ledger->lastSeq();
  REQUIRE(last > 10);
  cli::AdmissionWaits waits;
  for (std::uint64_t seq = 1; seq <= last; seq += 7) waits.follow(*ledger, seq);
  waits.follow(*ledger, last);
  CHECK(waits.seq() == last);
  const auto report = replay::workloadWaits(*ledger, std::numeric_limits<std::int64_t>::min() / 2,
                                            std::numeric_limits<std::int64_t>::max() / 2,
                                            replay::WaitGrouping::kClusterQueue);
  cli::AdmissionWaits once;
  for (const auto& g : report.groups) {
    for (const auto w : g.waitsNs) once.observe(g.key, w);
  }
  std::uint64_t admissions = 0, pending = 0;
  for (const auto& g : report.groups) {
    admissions += g.waitsNs.size();
    pending += g.stillPending;
  }
  CHECK(admissions > 0);
  CHECK(pending > 0);  // job-fpga-sim
  // The same observations, and the same workloads pending at the end.
  const std::string text = waits.metricsText();
  const auto histograms = [](const std::string& t) {
    return t.substr(0, t.find("# HELP ledger_pending_workloads"));
  };
  CHECK(histograms(text) == histograms(once.metricsText()));
  for (const auto& g : report.groups) {
    if (g.stillPending == 0) continue;
    CHECK(awt::hasLine(text, "ledger_pending_workloads{cluster_queue=\"" + g.key + "\"} " +
                                 std::to_string(g.stillPending)));
  }
}
