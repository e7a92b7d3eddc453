// The --watch daemon's memory over a long stream: the records go through the
// Ingester in the daemon's commits (kube::WriterOptions' batch of 1000, the
// live write-ahead-log bound), and after each commit the daemon's hooks run
// as tools/watch_command.cpp wires them: LiveState folds the commit (and
// renders /metrics, at most once a second) and LedgerUpkeep writes
// checkpoints and usage rollups on its thread. The HTTP watches are not run:
// they hold one page of events at a time, whatever the stream's length.
//
// Meant to run in its own child process (child.h): peak RSS (VmHWM) is read
// when 10%, 50% and all of the records are committed, so that growth with
// the stream shows as the ratio of the last to the first.
//
// Errors: throws (std::runtime_error, LedgerError, ReplayError) on failure.
#pragma once

#include <string>

#include "tools/bench/child.h"

namespace ledger::bench {

// Records `jsonlPath` into a fresh ledger at `dir` (sync off). Metrics:
// records, seconds, rssTenthMb, rssHalfMb, rssMb (peak RSS at 10%, 50% and
// 100% of the records), checkpointSeq (the newest checkpoint the upkeep
// wrote).
Metrics livePhase(const std::string& jsonlPath, const std::string& dir);

}  // namespace ledger::bench
