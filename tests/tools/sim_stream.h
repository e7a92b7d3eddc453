// The simulated cluster's watch stream as one string, and the time of a
// ledger's record, for the tests built with the generator (generator_tests).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "ledger/ledger.h"
#include "tools/generator/cluster_sim.h"

namespace ledger::testing {

// `startNs`: when the simulated history starts (the generator's own start
// otherwise).
inline std::string simulatedStream(std::uint64_t seed, std::uint64_t events, int nodes = 4,
                                   int queues = 4,
                                   std::optional<std::int64_t> startNs = std::nullopt) {
  gen::SimOptions o;
  o.seed = seed;
  o.events = events;
  o.nodes = nodes;
  o.queues = queues;
  if (startNs) o.startNs = *startNs;
  gen::ClusterSim sim(o);
  std::ostringstream out;
  sim.writeAll(out);
  return out.str();
}

inline std::int64_t timeOfSeq(const Ledger& ledger, std::uint64_t seq) {
  std::int64_t t = 0;
  REQUIRE(ledger.timeOf(seq, &t).isOk());
  return t;
}

}  // namespace ledger::testing
