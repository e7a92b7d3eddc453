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
#include <string>

#include "ledger.h"
#include "replayer.h"

namespace ledger::replay {

// Chosen from measurements (README, "Checkpoints"): at 1 KB of projection per
// record a checkpoint of a busy cluster costs well under 10% of the log it
// covers, and a query folds at most this many records.
inline constexpr std::uint64_t kDefaultCheckpointInterval = 20000;

// Writes the checkpoints due after the newest existing one; returns how many.
std::uint64_t writeCheckpoints(Ledger& ledger, std::uint64_t interval);

struct CheckpointVerification {
  std::uint64_t checked = 0;
  std::uint64_t firstBadSeq = 0;  // 0: all sound
  std::string problem;
};

CheckpointVerification verifyCheckpoints(const Ledger& ledger);

}  // namespace ledger::replay
