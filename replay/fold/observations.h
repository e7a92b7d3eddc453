// What the ledger observed and when it was blind, read from the Snapshot
// objects the sidecar records (schema/observation.h; docs/reference.md
// "Observation"): every answer over a period names the gaps that intersect
// it, and a moment before the first record is no moment of the ledger's.
//
// Snapshots are found through object_index (every build that writes them
// indexes every record it appends), so a question reads a handful of records,
// not the log.
//
// Value types and functions of a borrowed Ledger; thread-safe as the Ledger's
// reads are. Errors: throw ReplayError (replayer.h) on an unreadable ledger;
// a Snapshot record whose JSON lacks a field is read with that field empty.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ledger/ledger.h"

namespace ledger::replay {

struct ObservationGap {
  std::int64_t fromNs = 0;  // the last moment the resources were known current
  std::int64_t toNs = 0;    // the relist that saw them again
  std::vector<std::string> resources;
  std::string reason;
  bool operator==(const ObservationGap&) const = default;
};

// One snapshot's bracket: opened at `openedSeq`, closed at `closedSeq`
// (0 while it is not closed), its items in [firstSeq, lastSeq].
struct SnapshotBracket {
  std::string name;
  std::string reason;  // first-sync, relist
  std::uint64_t openedSeq = 0;
  std::uint64_t closedSeq = 0;
  std::uint64_t firstSeq = 0;
  std::uint64_t lastSeq = 0;
  std::int64_t startedNs = 0;
  std::int64_t completedNs = 0;
  std::vector<std::string> missing;
  std::vector<ObservationGap> gaps;
};

struct Coverage {
  bool empty = true;                 // the ledger holds no record
  std::int64_t observedFromNs = 0;   // its first record's time
  std::vector<ObservationGap> gaps;  // those that intersect the period asked about
};

// Every snapshot up to `lastSeq` (the ledger's end when 0), in seq order.
std::vector<SnapshotBracket> readSnapshots(const Ledger& ledger, std::uint64_t lastSeq = 0);

// Coverage of [fromNs, toNs] by the ledger up to `lastSeq` (its end when 0).
Coverage coverageOf(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                    std::uint64_t lastSeq = 0);

// The end of the one-nanosecond period that holds the moment `timeNs`, for
// coverageOf (the latest time the ledger can hold is its own end).
inline std::int64_t momentEnd(std::int64_t timeNs) {
  return timeNs < INT64_MAX ? timeNs + 1 : timeNs;
}

// The gap holding `timeNs`, if any (a moment the ledger did not observe).
const ObservationGap* gapAt(const Coverage& coverage, std::int64_t timeNs);

// "the ledger did not observe R from T1 to T2 (reason); ...": one sentence
// for warnings.
std::string describeGap(const ObservationGap& gap);

}  // namespace ledger::replay
