// The ledger's side of each benchmark phase, each meant to run in its own
// child process (child.h). All go through the project's real code paths:
// ValueReader -> normalizeValue -> Ingester (as ledger-ingest does), the
// Replayer, checkpoints and Ledger::scanRaw.
//
// Errors: throw (std::runtime_error, LedgerError, ReplayError) on failure;
// runPhase turns that into a failed outcome.
#pragma once

#include <cstdint>
#include <string>

#include "tools/bench/child.h"

namespace ledger::bench {

// Ingests `jsonlPath` into a fresh ledger at `dir` with sync off and
// `batch` records per commit. Metrics: values, recorded, rejected, bytes
// (file size), seconds (up to the last commit), cpuSeconds (same span).
Metrics ingestPhase(const std::string& jsonlPath, const std::string& dir, std::size_t batch);

// Opens the ledger writable and closes it, so sizes are comparable: the
// ingest's close flushed its memtables already (Ledger::~Ledger), and an open
// writes what a crashed run left in the write-ahead log into table files.
// Metrics: bytes.<family> (SST bytes per column family) and bytes.total.
Metrics settlePhase(const std::string& dir);

// What a read phase finds in the operating system's page cache.
enum class PageCache {
  // Whatever the phases before left. The full replay runs right after a raw
  // scan of the family it reads, so it reads warm.
  kAsLeft,
  // Warm, as for the replay: every family a query reads (projection, time
  // index, checkpoints and their copies) is read in full first, untimed.
  kWarm,
  // Cold: the ledger's files are dropped from the page cache
  // (posix_fadvise DONTNEED) before the phase and before each query, so
  // every block read goes to the disk (or to the host's cache, on a virtual
  // machine). RocksDB's own caches in the process are not dropped between
  // queries, as in a long-running reader.
  kCold,
};

// A full replay: Replayer::foldTo(last) without checkpoints; the state
// report is not built in the timed part (buildSeconds is measured after).
// `cache`: kAsLeft (the replay follows a raw scan of its family) or kCold;
// kWarm is taken as kAsLeft.
// Metrics: records, seconds, cpuSeconds, liveObjects, rssMb (peak RSS right
// after the fold), reportSeconds.
Metrics replayPhase(const std::string& dir, PageCache cache = PageCache::kAsLeft);

// The baseline: Ledger::scanRaw over the projection family, touching every
// byte. Metrics: records, bytes, seconds, cpuSeconds.
Metrics rawScanPhase(const std::string& dir);

// writeCheckpoints with the default interval. Metrics: written, seconds.
Metrics checkpointPhase(const std::string& dir);

// `queries` point-in-time queries at random times (seeded): seqAt(time) +
// foldTo(seq) with checkpoints; for the first 20, buildReport separately.
// Metrics: queries, foldMedianMs, foldP99Ms, reportMedianMs, reportP99Ms,
// warmSeconds (the untimed warm-up read).
Metrics queryPhase(const std::string& dir, int queries, std::uint64_t seed, PageCache cache);

}  // namespace ledger::bench
