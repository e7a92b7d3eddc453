#include "replay/fold/replayer.h"

#include <thread>

#include "replay/fold/object_reads.h"
#include "replay/fold/scan_ahead.h"

namespace ledger::replay {

ReplayError damagedObject(const kj::Exception& e) {
  return ReplayError(Status::corruption(
      std::string("the ledger is damaged: a stored object does not decode (") +
      e.getDescription().cStr() +
      "); `ledger-replay verify` names the record or checkpoint, `ledger-replay "
      "rebuild-projection` derives the projection again from the log, and `ledger-replay "
      "checkpoint --rewrite` rewrites the checkpoints"));
}

namespace {
constexpr std::uint64_t kCopyingFoldRecords = 4096;
}  // namespace

void Replayer::foldInto(ClusterState& state, std::uint64_t seq, const FoldOptions& options) const {
  foldAfter(state, seq, options, nullptr);
}

void Replayer::foldAfter(ClusterState& state, std::uint64_t seq, const FoldOptions& options,
                         std::unique_ptr<ObjectReads> reads) const {
  const std::uint64_t from = state.seq() + 1;
  if (seq < from) {
    Status st = reads ? state.adopt(*reads) : Status::ok();
    if (st.isOk()) st = state.materialize(ledger_);
    if (!st.isOk()) throw ReplayError(st);
    return;
  }
  const std::uint64_t total = seq - state.seq();
  // A short fold (a query after its checkpoint) keeps each record as it
  // passes: reading the survivors again afterwards costs a lookup each.
  const bool copy = total <= kCopyingFoldRecords;
  const bool twoCores = std::thread::hardware_concurrency() > 1;
  // The objects a restored checkpoint names are read on a helper thread
  // while this one folds (ObjectReads); the fold's own records need no read.
  if (!reads && copy && twoCores && !state.materialized())
    reads = std::make_unique<ObjectReads>(ledger_, state.pendingSeqs(), true);
  std::uint64_t done = 0;
  auto foldOne = [&](std::uint64_t s, kj::ArrayPtr<const capnp::word> w) {
    if (copy) {
      state.apply(s, w);
    } else {
      state.applyDeferred(s, w);
    }
    if (options.progress && (++done & 0xFFFF) == 0) options.progress(done, total);
    return true;
  };
  // A long fold reads on a second core while this one folds.
  Status st = scanProjectionAheadIfLong(ledger_, from, seq, foldOne);
  if (st.isOk() && reads) st = state.adopt(*reads);
  if (st.isOk()) st = state.materialize(ledger_);  // whatever is still pending
  if (!st.isOk()) throw ReplayError(st);
  if (options.progress) options.progress(total, total);
}

ClusterState Replayer::foldTo(std::uint64_t seq, const FoldOptions& options) const {
  const std::uint64_t last = ledger_.lastSeq();
  if (seq > last) seq = last;
  ClusterState state;
  std::uint64_t restoredFrom = 0;      // the checkpoint in use, if any
  std::unique_ptr<ObjectReads> reads;  // of the restored checkpoint's objects
  const bool twoCores = std::thread::hardware_concurrency() > 1;
  if (options.useCheckpoints) {
    std::uint64_t at = seq;
    while (at > 0) {
      std::uint64_t found = 0;
      std::string bytes;
      Status st = ledger_.checkpointAtOrBefore(at, &found, &bytes);
      if (!st.isOk() || found == 0) break;
      try {
        // The objects it names are read once (copies by chunk, the rest by
        // seq), starting while this thread builds the maps and folds; those
        // the fold replaces are dropped. Copies are read only from here.
        state = ClusterState::restoreReferences(bytes, nullptr, [&](std::vector<ObjectRef> refs) {
          if (seq - found <= kCopyingFoldRecords)
            reads = std::make_unique<ObjectReads>(ledger_, std::move(refs), twoCores);
        });
        if (state.seq() != found)
          throw std::runtime_error("checkpoint records seq " + std::to_string(state.seq()));
        restoredFrom = found;
        break;
      } catch (const std::exception& e) {
        if (options.onBadCheckpoint) options.onBadCheckpoint(found, e.what());
        state = ClusterState();
        reads.reset();
        at = found - 1;
      }
    }
  }
  if (restoredFrom == 0) {
    foldInto(state, seq, options);
    if (options.onRestored) options.onRestored(0);
    return state;
  }
  try {
    foldAfter(state, seq, options, std::move(reads));
  } catch (const ReplayError& e) {
    // A checkpoint naming a record the ledger cannot give is as bad as one
    // failing its checksum: say so and fold from the start (which throws
    // again if the ledger itself is at fault).
    if (options.onBadCheckpoint) options.onBadCheckpoint(restoredFrom, e.what());
    FoldOptions fresh = options;
    fresh.useCheckpoints = false;
    return foldTo(seq, fresh);
  }
  if (options.onRestored) options.onRestored(restoredFrom);
  return state;
}

std::uint64_t Replayer::seqAt(std::int64_t timeNs) const {
  std::uint64_t seq = 0;
  Status st = ledger_.seqAtOrBefore(timeNs, &seq);
  if (!st.isOk()) throw ReplayError(st);
  return seq;
}

}  // namespace ledger::replay
