// verifyCheckpoints (checkpoints.h): each checkpoint against a fresh fold
// to its seq, and the copies in checkpoint_objects against the projection
// records they copy.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <future>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "ledger/format.h"
#include "replay/fold/checkpoints.h"
#include "schema/checkpoint.capnp.h"

namespace ledger::replay {

namespace verify_checkpoints {

// The copies in checkpoint_objects stand in for the projection records they
// copy when a query reads a checkpoint: each must be that record byte for
// byte. A fold's digest covers only the objects' projections, not the
// records' headers (type, time, identity), and a chunk only its own XXH3.
// Returns the lowest checkpoint seq whose chunks are not (0: all are), with
// the problem.
std::uint64_t checkCopies(const Ledger& ledger, std::string* problem) {
  std::map<std::uint64_t, std::vector<CheckpointChunkId>> byCheckpoint;
  std::uint64_t bad = 0;
  if (Status st = ledger.scanRaw(format::kCheckpointObjectsFamily,
                                 [&](std::string_view key, std::string_view) {
                                   const std::uint64_t seq = format::decodeU64(key);
                                   if (key.size() != 12) {
                                     if (bad == 0 || seq < bad) {
                                       bad = std::max<std::uint64_t>(seq, 1);
                                       *problem = "a checkpoint chunk's key is malformed";
                                     }
                                     return;
                                   }
                                   const auto chunk =
                                       static_cast<std::uint32_t>(format::decodeU64(key.substr(8)));
                                   byCheckpoint[seq].push_back(CheckpointChunkId{seq, chunk});
                                 });
      !st.isOk()) {
    throw ReplayError(st);
  }
  std::string record;
  for (const auto& [seq, ids] : byCheckpoint) {
    if (bad != 0 && bad <= seq) break;
    std::string wrong;
    // The bindings captured by name: clang 14 (Debian 12's, the fuzz
    // build's) does not capture structured bindings.
    Status st = ledger.readCheckpointChunks(ids, [&, seq = seq, &ids = ids](
                                                     std::size_t i,
                                                     kj::ArrayPtr<const capnp::word> words) {
      capnp::FlatArrayMessageReader reader(words);
      const auto chunk = reader.getRoot<schema::CheckpointChunk>();
      const auto seqs = chunk.getSeqs();
      const auto records = chunk.getRecords();
      if (seqs.size() != records.size()) {
        wrong = "checkpoint chunk " + std::to_string(ids[i].chunk) + " is malformed";
        return;
      }
      for (unsigned j = 0; j < seqs.size() && wrong.empty(); ++j) {
        // A copy of a record the archive holds stands for it alone: the
        // checkpoint at the cut is checked against its own digest.
        if (seqs[j] != 0 && seqs[j] < ledger.firstSeq()) continue;
        const auto copy = records[j];
        const std::string_view bytes(reinterpret_cast<const char*>(copy.begin()), copy.size());
        if (seqs[j] == 0 || seqs[j] > seq ||
            !ledger.getRaw(format::kProjectionFamily, format::seqKey(seqs[j]), &record).isOk() ||
            bytes != record) {
          wrong = "the copy of seq " + std::to_string(seqs[j]) + " in checkpoint chunk " +
                  std::to_string(ids[i].chunk) + " is not that seq's projection record";
        }
      }
    });
    if (!st.isOk() && wrong.empty()) wrong = "checkpoint chunk unreadable: " + st.message();
    if (!wrong.empty()) {
      bad = seq;
      *problem = std::move(wrong);
    }
  }
  return bad;
}

// A range fewer checkpoints apart than this is folded faster than a thread
// starts.
constexpr std::size_t kMinRangeCheckpoints = 8;

// The state restored from the checkpoint at `seq`, once it restores to the
// digest it records; nullopt with the problem otherwise.
std::optional<ClusterState> restoreAt(const Ledger& ledger, std::uint64_t seq,
                                      std::string* problem) {
  std::string bytes;
  std::uint64_t found = 0;
  if (Status st = ledger.checkpointAtOrBefore(seq, &found, &bytes); !st.isOk())
    throw ReplayError(st);
  try {
    Digest recorded{};
    std::optional<ClusterState> state;
    if (found == seq) state = ClusterState::restore(bytes, ledger, &recorded);
    if (!state || state->seq() != seq || state->digest() != recorded) {
      *problem = "is missing or does not restore to its digest";
      return std::nullopt;
    }
    return state;
  } catch (const std::exception& e) {
    *problem = std::string("is corrupt: ") + e.what();
  } catch (const kj::Exception& e) {
    *problem = std::string("is corrupt: ") + e.getDescription().cStr();
  }
  return std::nullopt;
}

// The checkpoint at `seq` against `fresh`, a fold to that seq: "" when it is
// what the fold writes, else the problem.
std::string compareAt(const Ledger& ledger, const ClusterState& fresh, std::uint64_t seq) {
  std::string bytes;
  std::uint64_t found = 0;
  if (Status st = ledger.checkpointAtOrBefore(seq, &found, &bytes); !st.isOk())
    throw ReplayError(st);
  try {
    Digest recorded{};
    ClusterState stored = ClusterState::restore(bytes, ledger, &recorded);
    const Digest expected = fresh.digest();
    if (stored.seq() != seq || recorded != expected || stored.digest() != expected) {
      return "checkpoint differs from a fresh replay to the same seq";
    }
    // The digest covers the objects and the charge history, not the rest
    // of the checkpoint (its time, which copies it names): written again
    // from the fresh fold with the copies it names, it is the same bytes.
    CopiedVersions copies;
    ClusterState::restoreReferences(bytes, nullptr, [&](std::vector<ObjectRef> refs) {
      for (const ObjectRef& r : refs) {
        if (r.copy.checkpointSeq != 0) copies.emplace(r.seq, r.copy);
      }
    });
    if (fresh.serialize(copies) != bytes) {
      return "checkpoint is not what a fresh replay to the same seq writes";
    }
  } catch (const std::exception& e) {
    return std::string("checkpoint is corrupt: ") + e.what();
  } catch (const kj::Exception& e) {
    // A copy that restores but does not decode in full: the digest reads
    // every object to its last pointer.
    return std::string("checkpoint is corrupt: a copy does not decode: ") +
           e.getDescription().cStr();
  }
  return {};
}

// The checkpoints `seqs` in order, folding on from `fresh`; stops at the
// first bad one, or before the first at or after `badCopies` (0: none).
CheckpointVerification checkRange(const Ledger& ledger, ClusterState fresh,
                                  std::span<const std::uint64_t> seqs, std::uint64_t badCopies) {
  CheckpointVerification out;
  Replayer replayer(ledger);
  for (const std::uint64_t seq : seqs) {
    if (badCopies != 0 && badCopies <= seq) break;
    ++out.checked;
    if (seq > ledger.lastSeq()) {
      out.firstBadSeq = seq;
      out.problem = "checkpoint beyond the end of the log";
      return out;
    }
    replayer.foldInto(fresh, seq);
    if (std::string problem = compareAt(ledger, fresh, seq); !problem.empty()) {
      out.firstBadSeq = seq;
      out.problem = std::move(problem);
      return out;
    }
  }
  return out;
}

// Where the first range starts: an empty state, or a cut ledger's
// checkpoint at the cut, taken as the link to the archive is (it was folded
// from the archived records) once it restores to the digest it records.
std::optional<ClusterState> firstStart(const Ledger& ledger, CheckpointVerification* bad) {
  const auto& cut = ledger.archiveCut();
  if (!cut) return ClusterState();
  std::string problem;
  auto state = restoreAt(ledger, cut->seq, &problem);
  if (!state) {
    bad->firstBadSeq = cut->seq;
    bad->problem = "the checkpoint at the cut " + problem;
  }
  return state;
}

}  // namespace verify_checkpoints

// The checkpoints are split into ranges checked on threads of their own,
// each folding on from the checkpoint before it, restored: the range before
// checks that checkpoint against its own fold, so by induction every
// checkpoint is compared with a fold from the first record (or the cut), as
// one pass would, and the merged answer is that pass's.
CheckpointVerification verifyCheckpoints(const Ledger& ledger, unsigned threads) {
  using namespace verify_checkpoints;
  std::vector<std::uint64_t> seqs;
  if (Status st = ledger.scanCheckpoints([&](std::uint64_t seq, std::string_view) {
        seqs.push_back(seq);
        return true;
      });
      !st.isOk()) {
    throw ReplayError(st);
  }
  CheckpointVerification out;
  std::optional<ClusterState> start = firstStart(ledger, &out);
  if (!start) return out;
  std::string copyProblem;
  const std::uint64_t badCopies = checkCopies(ledger, &copyProblem);
  std::size_t ranges = threads != 0 ? threads : std::max(1U, std::thread::hardware_concurrency());
  if (threads == 0) ranges = std::min(ranges, seqs.size() / kMinRangeCheckpoints);
  ranges = std::clamp<std::size_t>(ranges, 1, std::max<std::size_t>(1, seqs.size()));
  std::vector<std::future<CheckpointVerification>> running;
  for (std::size_t i = 0; i < ranges; ++i) {
    const std::size_t from = seqs.size() * i / ranges;
    const std::size_t to = seqs.size() * (i + 1) / ranges;
    const std::span<const std::uint64_t> range(seqs.data() + from, to - from);
    running.push_back(
        std::async(i == 0 ? std::launch::deferred : std::launch::async, [&, i, from, range] {
          if (i == 0) return checkRange(ledger, std::move(*start), range, badCopies);
          // A range the one pass would not reach for a bad copy before it.
          if (badCopies != 0 && badCopies <= seqs[from - 1]) return CheckpointVerification{};
          std::string problem;
          auto restored = restoreAt(ledger, seqs[from - 1], &problem);
          // The range before names that checkpoint.
          if (!restored) return CheckpointVerification{0, seqs[from - 1], problem};
          return checkRange(ledger, std::move(*restored), range, badCopies);
        }));
  }
  for (auto& r : running) {
    const CheckpointVerification range = r.get();
    out.checked += range.checked;
    if (range.firstBadSeq != 0) {
      out.firstBadSeq = range.firstBadSeq;
      out.problem = range.problem;
      return out;
    }
  }
  if (badCopies != 0) {
    out.firstBadSeq = badCopies;
    out.problem = copyProblem;
  }
  return out;
}

}  // namespace ledger::replay
