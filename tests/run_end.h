// Shared test fixtures released when the Catch2 run ends (tests/catch_main.cpp
// calls releaseSharedFixtures from a listener), before static destruction.
// A fixture kept in a function-local static is destroyed after every static
// constructed later, RocksDB's own among them when the fixture's ledger was
// the process's first: closing that ledger then would use what is gone.
//
// Test-only; not thread-safe (called from the test thread).
#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace ledger::testing {

inline std::vector<std::function<void()>>& sharedFixtureReleases() {
  static std::vector<std::function<void()>> releases;
  return releases;
}

// Runs `release` when the test run ends.
inline void releaseAtRunEnd(std::function<void()> release) {
  sharedFixtureReleases().push_back(std::move(release));
}

inline void releaseSharedFixtures() {
  for (auto& release : sharedFixtureReleases()) release();
  sharedFixtureReleases().clear();
}

}  // namespace ledger::testing
