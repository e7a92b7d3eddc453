// Folds a ledger's projection into a ClusterState, from the start or from
// the newest checkpoint at or before the target (checkpoints are derived
// data: a checkpoint that does not decode, or whose digest disagrees with its
// contents, is skipped with a warning and the fold starts further back).
//
// Ownership: borrows the Ledger. Thread-compatible (one fold at a time per
// Replayer). Throws ReplayError when the ledger cannot be read or its
// projection is corrupt.
#pragma once

#include <kj/exception.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "ledger/ledger.h"
#include "replay/fold/cluster_state.h"

namespace ledger::replay {

class ObjectReads;

class ReplayError : public std::runtime_error {
 public:
  ReplayError(const Status& status)
      : std::runtime_error(status.toString()), corrupt_(status.isCorruption()), status_(status) {}
  explicit ReplayError(const std::string& what, bool corrupt = false)
      : std::runtime_error(what),
        corrupt_(corrupt),
        status_(corrupt ? Status::corruption(what) : Status::invalidArgument(what)) {}
  bool corrupt() const { return corrupt_; }
  // The ledger's status behind the error (an impossible request when the
  // error is not the ledger's), for the programs' exit code.
  const Status& status() const { return status_; }

 private:
  bool corrupt_;
  Status status_;
};

// The error for a stored object that folded but does not decode deeper down
// (cluster_state.h, "Errors"), from the kj::Exception its reader threw: a
// corrupt ReplayError whose message names the repairs. Callers convert on
// the thread that caught it: kj aborts the process when a kj::Exception is
// destroyed on another thread than the one it was thrown on.
ReplayError damagedObject(const kj::Exception& e);

struct FoldOptions {
  bool useCheckpoints = true;
  // Called now and then with (records folded, records to fold).
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  // Called for each checkpoint skipped as unusable, with the reason.
  std::function<void(std::uint64_t seq, const std::string& why)> onBadCheckpoint;
  // foldTo only: called once with the checkpoint the state was restored
  // from (0: folded from the first record), e.g. for a log line.
  std::function<void(std::uint64_t checkpointSeq)> onRestored;
};

class Replayer {
 public:
  explicit Replayer(const Ledger& ledger) : ledger_(ledger) {}

  // The state after record `seq` (0: before any record, the empty state;
  // past the end: after the last record).
  ClusterState foldTo(std::uint64_t seq, const FoldOptions& options = {}) const;
  // Continues folding `state` up to `seq`. A long fold notes which record
  // holds each object and reads the survivors once at the end; a short one
  // (up to a few thousand records, a query after its checkpoint) keeps each
  // record as it passes. Both give the same state.
  void foldInto(ClusterState& state, std::uint64_t seq, const FoldOptions& options = {}) const;
  // The last seq at or before a time (0 when the log starts later).
  std::uint64_t seqAt(std::int64_t timeNs) const;

 private:
  // foldInto, with the reads of a restored checkpoint's objects already
  // under way (or null: started here when worth it).
  void foldAfter(ClusterState& state, std::uint64_t seq, const FoldOptions& options,
                 std::unique_ptr<ObjectReads> reads) const;

  const Ledger& ledger_;
};

}  // namespace ledger::replay
