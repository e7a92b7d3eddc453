// The simulated cluster's watch stream as one string, for the tests built
// with the generator (generator_tests).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "tools/generator/cluster_sim.h"

namespace ledger::testing {

inline std::string simulatedStream(std::uint64_t seed, std::uint64_t events, int nodes = 4,
                                   int queues = 4) {
  gen::SimOptions o;
  o.seed = seed;
  o.events = events;
  o.nodes = nodes;
  o.queues = queues;
  gen::ClusterSim sim(o);
  std::ostringstream out;
  sim.writeAll(out);
  return out.str();
}

}  // namespace ledger::testing
