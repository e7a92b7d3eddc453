#include "checkpoints.h"

#include <vector>

namespace ledger::replay {

std::uint64_t writeCheckpoints(Ledger& ledger, std::uint64_t interval) {
  if (interval == 0) return 0;
  Replayer replayer(ledger);
  const std::uint64_t last = ledger.lastSeq();
  std::uint64_t newest = 0;
  std::string bytes;
  if (Status st = ledger.checkpointAtOrBefore(last, &newest, &bytes); !st.isOk())
    throw ReplayError(st);
  std::uint64_t next = (newest / interval + 1) * interval;
  if (next > last) return 0;
  FoldOptions fo;  // resumes from the newest good checkpoint
  ClusterState state = replayer.foldTo(newest, fo);
  std::uint64_t written = 0;
  for (; next <= last; next += interval) {
    replayer.foldInto(state, next);
    if (Status st = ledger.putCheckpoint(next, state.serialize()); !st.isOk())
      throw ReplayError(st);
    ++written;
  }
  return written;
}

CheckpointVerification verifyCheckpoints(const Ledger& ledger) {
  CheckpointVerification out;
  std::vector<std::uint64_t> seqs;
  if (Status st = ledger.scanCheckpoints([&](std::uint64_t seq, std::string_view) {
        seqs.push_back(seq);
        return true;
      });
      !st.isOk()) {
    throw ReplayError(st);
  }
  Replayer replayer(ledger);
  ClusterState fresh;
  for (std::uint64_t seq : seqs) {
    ++out.checked;
    if (seq > ledger.lastSeq()) {
      out.firstBadSeq = seq;
      out.problem = "checkpoint beyond the end of the log";
      return out;
    }
    replayer.foldInto(fresh, seq);
    std::string bytes;
    std::uint64_t found = 0;
    if (Status st = ledger.checkpointAtOrBefore(seq, &found, &bytes); !st.isOk())
      throw ReplayError(st);
    try {
      Digest recorded{};
      ClusterState stored = ClusterState::restore(bytes, ledger, &recorded);
      const Digest expected = fresh.digest();
      if (stored.seq() != seq || recorded != expected || stored.digest() != expected) {
        out.firstBadSeq = seq;
        out.problem = "checkpoint differs from a fresh replay to the same seq";
        return out;
      }
    } catch (const std::exception& e) {
      out.firstBadSeq = seq;
      out.problem = std::string("checkpoint is corrupt: ") + e.what();
      return out;
    }
  }
  return out;
}

}  // namespace ledger::replay
