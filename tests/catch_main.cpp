#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "tests/run_end.h"

namespace {

// Releases the fixtures the cases share (tests/run_end.h) as the run ends.
class ReleaseSharedFixtures : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats& stats) override {
    ledger::testing::releaseSharedFixtures();
    TestEventListenerBase::testRunEnded(stats);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(ReleaseSharedFixtures)
