// Runs one benchmark phase in a child process (fork), so that each phase's
// peak RSS is its own (wait4's ru_maxrss) and a phase that crashes or leaks
// does not disturb the next. The child hands back named numbers, and named
// lines of text (phaseText).
//
// The parent must not hold RocksDB handles or other threads when it forks
// (only the forking thread survives in the child).
// Thread safety: call from one thread. Errors: a phase that throws or dies
// comes back with ok == false and the reason; runPhase itself throws
// std::system_error when fork/pipe fail.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace ledger::bench {

using Metrics = std::map<std::string, double>;

struct PhaseOutcome {
  bool ok = false;
  std::string error;
  Metrics metrics;
  std::map<std::string, std::string> texts;  // what the body passed to phaseText
  double maxRssMb = 0;                       // peak resident set of the child
};

// Whether a phase's process backs its heap with transparent huge pages as
// the programs that answer and exit do (ledger-query, ledger-replay: this
// program's allocator options, tools/meson.build), or without, as
// ledger-ingest does: a writer's phase is measured as ledger-ingest runs.
enum class HugePages { kAsAnswering, kAsLedgerIngest };

PhaseOutcome runPhase(const std::function<Metrics()>& body,
                      HugePages pages = HugePages::kAsAnswering);

// Called by a phase's body (in the child): hands `text` back under `key`
// (without spaces) beside the metrics (PhaseOutcome::texts). Line breaks in
// `text` become spaces.
void phaseText(const std::string& key, const std::string& text);

// This process's peak resident set so far (VmHWM), in MB; 0 if unknown.
double peakRssMb();

// Seconds on a monotonic clock.
double nowSeconds();
// CPU seconds (user + system) of every thread of this process so far: on a
// shared machine the work a phase did, where wall time also counts waiting
// for the CPU.
double cpuSeconds();

}  // namespace ledger::bench
