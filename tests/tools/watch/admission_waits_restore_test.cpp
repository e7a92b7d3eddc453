// The daemon's waits started from the stored wait data
// (replay/kueue/wait_rollups.h) equal those of a pass over the whole
// history, at start and as both follow later commits.
#include <catch2/catch.hpp>

#include "replay/kueue/wait_rollups.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"
#include "tools/watch/admission_waits.h"

using namespace ledger;
using namespace ledger::testing;

TEST_CASE("admission waits restored from stored wait data equal a pass over the history",
          "[generator][rollups][waits][large]") {
  TempDir dir;
  const std::string stream = simulatedStream(8, 6000, 6, 4);
  const std::size_t twoThirds = stream.find('\n', stream.size() * 2 / 3) + 1;
  auto ledger = openLedger(dir.path("l"));
  REQUIRE(ingestText(*ledger, stream.substr(0, twoThirds), "test", 500).rejected == 0);
  // The pass over the history, before anything is stored.
  cli::AdmissionWaits full;
  full.follow(*ledger, ledger->lastSeq());
  CHECK_FALSE(full.startedFromStored());
  REQUIRE(replay::writeWaitRollups(*ledger, 512) > 0);
  REQUIRE(replay::waitRollupCoverage(*ledger));

  cli::AdmissionWaits restored;
  restored.follow(*ledger, ledger->lastSeq());
  CHECK(restored.startedFromStored());
  CHECK(restored.seq() == ledger->lastSeq());
  const std::string text = full.metricsText();
  CHECK(text.find("ledger_admission_wait_time_seconds_count") != std::string::npos);
  CHECK(restored.metricsText() == text);

  // Later commits, followed by both.
  REQUIRE(ingestText(*ledger, stream.substr(twoThirds), "test", 500).rejected == 0);
  full.follow(*ledger, ledger->lastSeq());
  restored.follow(*ledger, ledger->lastSeq());
  CHECK(restored.metricsText() == full.metricsText());
  CHECK(restored.metricsText() != text);

  // Started at a seq before the stored hours end: the history instead.
  cli::AdmissionWaits early;
  early.follow(*ledger, 10);
  CHECK_FALSE(early.startedFromStored());
}
