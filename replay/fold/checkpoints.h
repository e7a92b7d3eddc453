// Checkpoints: the folded ClusterState serialised every N records, so a
// point-in-time query folds at most N records after loading one.
// Derived data: writing, dropping or corrupting checkpoints changes no
// answer (a bad one is skipped by the Replayer); verifyCheckpoints proves
// each equals a fresh replay to its seq.
//
// Thread-compatible. Throws ReplayError when the ledger cannot be read or
// written.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ledger/ledger.h"
#include "replay/fold/replayer.h"

namespace ledger::replay {

// Chosen from measurements (docs/performance.md, "Point-in-time queries"):
// checkpoints name objects by reference, so one every 2000 records costs a
// small share of the log's bytes, and a query folds at most 2000 records
// after loading one.
inline constexpr std::uint64_t kDefaultCheckpointInterval = 2000;

// Writes the checkpoints due after the newest existing one; returns how many.
// Each copies the versions older than `interval` that no earlier checkpoint
// copied into chunks of its own (copyLongLived), and names the rest by seq.
// `progress`, when set, is called after each with (its seq, the last seq).
std::uint64_t writeCheckpoints(
    Ledger& ledger, std::uint64_t interval,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

// The chunks of copies a checkpoint of `state` adds: every live version at
// least `age` records old that `copies` does not hold yet, in seq order.
// Updates `copies` to where each live copied version is (dropping versions
// no longer live), which is what state.serialize() then names.
//
// Why: the objects a checkpoint names are scattered over the whole history
// (ResourceSlices are republished rarely, long jobs' pods live for hours),
// so a query paid a point lookup and a block decompression for nearly each
// one. Copied together, they are read a chunk at a time. Each version is
// copied once, by the first checkpoint that finds it old enough.
std::vector<std::string> copyLongLived(const ClusterState& state, std::uint64_t age,
                                       CopiedVersions& copies);

struct CheckpointVerification {
  std::uint64_t checked = 0;
  std::uint64_t firstBadSeq = 0;  // 0: all sound
  std::string problem;
};

// Every checkpoint against a fresh fold to its seq, and every copy against
// the projection record it copies; the first bad one named. On `threads`
// threads (0: one per core, once there are checkpoints enough to pay for
// them), each folding on from the checkpoint before its range; the answer
// is one pass's for any number.
CheckpointVerification verifyCheckpoints(const Ledger& ledger, unsigned threads = 0);

}  // namespace ledger::replay
