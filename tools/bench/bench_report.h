// What one benchmark size measured, and how ledger-bench prints it: a
// markdown table per size (ledger vs baseline, ratio, target) and the
// scaling rows across sizes. Pure formatting; thread-compatible.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tools/bench/child.h"
#include "tools/bench/end_to_end.h"

namespace ledger::bench {

struct SizeRun {
  std::uint64_t events = 0;
  double jsonBytes = 0;
  double generateSeconds = 0;
  // Each phase's outcome (empty metrics when it failed or did not run).
  PhaseOutcome rawWrite, ingest, settle, replay, rawScan, checkpoints, settleCheckpoints, query;
  // The raw write again as table files (raw_baseline.h): for reference.
  PhaseOutcome rawTableWrite;
  // The daemon's path over the stream (live_phase.h): its peak RSS.
  PhaseOutcome live;
  // The full replay again, right after the queries: they are compared with
  // the mean of the two, since the machine's speed drifts between phases
  // minutes apart by more than a target's margin.
  PhaseOutcome replayAfterQueries;
  // The full replay and the queries again, with the ledger's files dropped
  // from the page cache first (phases.h, PageCache::kCold).
  PhaseOutcome replayCold, queryCold;
  // The ledger's facts for the end-to-end questions, and their answers
  // (end_to_end.h), asked with the page cache warm after the replays.
  PhaseOutcome facts;
  std::vector<EndToEndAnswer> endToEnd;
  double ledgerBytes = 0;      // directory, before checkpoints
  double checkpointBytes = 0;  // the checkpoints family after they were written

  // The phases of measureReadSide, for checking that all ran.
  std::vector<const PhaseOutcome*> readPhases() const {
    return {&replay, &rawScan,    &checkpoints, &settleCheckpoints, &query, &replayAfterQueries,
            &facts,  &replayCold, &queryCold};
  }
  // Whether every end-to-end question was answered.
  bool endToEndOk() const {
    return std::all_of(endToEnd.begin(), endToEnd.end(),
                       [](const EndToEndAnswer& a) { return a.ok; });
  }
};

struct Targets {
  double ingestRatio = 0.5;
  double replayRatio = 0.5;
  double pointInTimeSpeedup = 1000;  // at 10M events
  double storedShare = 0.25;
  // Issue 50: ingest against the raw write as table files, and the whole
  // ledger directory after ingest per record.
  double tableWriteRatio = 0.5;
  double bytesPerRecord = 350;
};

// The nearest-rank percentile (0 < p <= 1) of samples in any order; 0 when
// there are none.
double percentile(std::vector<double> samples, double p);

void printSizeTable(std::ostream& out, const SizeRun& run, std::size_t batch, const Targets& t);
void printScaling(std::ostream& out, const std::vector<SizeRun>& runs);
// The daemon's row (SizeRun::live) alone, for `--live-only`.
void printLiveTable(std::ostream& out, const SizeRun& run);
// The read side alone (ledger-bench --ledger): replay, queries, checkpoint
// and stored bytes, RSS. `run` has no ingest or raw-write phases.
void printLedgerTable(std::ostream& out, const SizeRun& run, const Targets& t);
// A phase's metric, 0 when it did not run.
double get(const PhaseOutcome& p, const char* key);

}  // namespace ledger::bench
