// A deterministic simulation of a Kueue cluster with DRA GPUs, producing the
// watch-event stream a ledger ingests (docs/reference.md "Input": one
// {"type", "object", "time"} JSON value per line).
//
// The cluster: `nodes` nodes with 8 A100 GPUs each, published through
// ResourceSlices as whole GPUs and MIG 1g.5gb partitions with shared
// counters (drivers republish now and then, bumping the pool generation);
// two DeviceClasses and the DRA mapping (the Kueue CR); two ResourceFlavors;
// `queues` ClusterQueues in cohorts, each with a namespace, a LocalQueue and
// ResourceClaimTemplates. Workloads arrive (Poisson), wait, are admitted
// (quota and devices permitting), run (Pods, generated ResourceClaims with
// allocations), finish or are evicted and requeued, and are deleted. Objects
// carry managedFields as the API server sends them (2-10 KB each). The set
// of live objects stays bounded however long the stream runs.
//
// Determinism: the same options give the same bytes.
// Ownership: owns its state. Thread safety: none (one sim per thread).
// Errors: throws std::invalid_argument for bad options, else only bad_alloc.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

namespace ledger::gen {

struct SimOptions {
  std::uint64_t seed = 1;
  std::uint64_t events = 100000;  // lines to produce
  int nodes = 64;
  int queues = 16;
  int cohortSize = 4;                                  // ClusterQueues per cohort
  std::int64_t startNs = 1795161600LL * 1000000000LL;  // 2026-11-20T08:00:00Z
};

class SimEngine;

class ClusterSim {
 public:
  explicit ClusterSim(const SimOptions& options);
  ~ClusterSim();
  ClusterSim(const ClusterSim&) = delete;
  ClusterSim& operator=(const ClusterSim&) = delete;

  // The next watch event as one line of JSON (no newline); false once
  // `options.events` lines have been produced.
  bool next(std::string* line);
  // Writes every remaining event, newline-terminated; returns bytes written.
  std::uint64_t writeAll(std::ostream& out);
  std::uint64_t produced() const { return produced_; }

 private:
  std::unique_ptr<SimEngine> engine_;
  std::uint64_t limit_;
  std::uint64_t produced_ = 0;
};

}  // namespace ledger::gen
