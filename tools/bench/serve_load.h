// The load on `ledger-query serve` (docs/performance.md): the real program
// of the same build started on an existing ledger, then rounds of N
// concurrent list requests from loopback, each round at a moment not asked
// before (so its first requests fold the state there) and once more at the
// same moment (folded states are kept), each request what `kubectl get`
// sends: the Table form of Workloads in all namespaces, of Pods, of
// ClusterQueues and of the ledger's QueueUsages, in turn.
//
// Thread-compatible. Errors: a request that fails or answers other than 200
// is counted and printed, not thrown; runServeLoad throws
// std::runtime_error when the server cannot be started.
#pragma once

#include <ostream>
#include <string>

namespace ledger::bench {

struct ServeLoadOptions {
  std::string ledgerDir;
  int clients = 200;  // concurrent requests per round
  int moments = 5;    // rounds at new moments (each followed by a warm round)
  std::uint64_t seed = 1;
};

// Prints a markdown table of latencies (p50, p99, max) per kind of round;
// returns false when any request failed.
bool runServeLoad(const ServeLoadOptions& options, std::ostream& out);

}  // namespace ledger::bench
