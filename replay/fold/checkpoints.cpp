#include "replay/fold/checkpoints.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <map>
#include <vector>

#include "ledger/format.h"
#include "schema/checkpoint.capnp.h"

namespace ledger::replay {

namespace {

// A chunk holds copies up to about this size (one object may exceed it):
// two to a 32 KB block, so a query that wants one copy decompresses little
// else, while most chunks it reads are wanted whole.
constexpr std::size_t kChunkBytes = 16 * 1024;

std::string encodeChunk(const std::vector<const StoredObject*>& objects) {
  capnp::MallocMessageBuilder message;
  auto chunk = message.initRoot<schema::CheckpointChunk>();
  auto seqs = chunk.initSeqs(static_cast<unsigned>(objects.size()));
  auto records = chunk.initRecords(static_cast<unsigned>(objects.size()));
  for (unsigned i = 0; i < objects.size(); ++i) {
    seqs.set(i, objects[i]->seq());
    records.set(i, objects[i]->recordWords().asBytes());
  }
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

}  // namespace

std::vector<std::string> copyLongLived(const ClusterState& state, std::uint64_t age,
                                       CopiedVersions& copies) {
  CopiedVersions kept;
  std::vector<const StoredObject*> fresh;
  for (std::size_t k = 0; k < static_cast<std::size_t>(ObjectKind::kCount); ++k) {
    for (const auto& [key, obj] : state.objects(static_cast<ObjectKind>(k))) {
      if (auto c = copies.find(obj->seq()); c != copies.end()) {
        kept.insert(*c);
      } else if (obj->seq() + age <= state.seq()) {
        fresh.push_back(obj.get());
      }
    }
  }
  // Seq order: versions written together (a driver republishing its
  // slices, a workload's pods) tend to be wanted together later.
  std::sort(fresh.begin(), fresh.end(),
            [](const StoredObject* a, const StoredObject* b) { return a->seq() < b->seq(); });
  std::vector<std::string> chunks;
  std::vector<const StoredObject*> chunk;
  std::size_t bytes = 0;
  auto close = [&] {
    if (chunk.empty()) return;
    for (const StoredObject* obj : chunk) {
      kept[obj->seq()] = CheckpointChunkId{state.seq(), static_cast<std::uint32_t>(chunks.size())};
    }
    chunks.push_back(encodeChunk(chunk));
    chunk.clear();
    bytes = 0;
  };
  for (const StoredObject* obj : fresh) {
    chunk.push_back(obj);
    bytes += obj->recordWords().size() * sizeof(capnp::word);
    if (bytes >= kChunkBytes) close();
  }
  close();
  copies = std::move(kept);
  return chunks;
}

std::uint64_t writeCheckpoints(Ledger& ledger, std::uint64_t interval,
                               const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
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
  bool newestIsGood = true;
  fo.onBadCheckpoint = [&](std::uint64_t, const std::string&) { newestIsGood = false; };
  ClusterState state = replayer.foldTo(newest, fo);
  // The copies the newest checkpoint names serve the next ones too, unless
  // it could not be used (then its copies are not trusted: copy afresh).
  CopiedVersions copies;
  if (newest != 0 && newestIsGood) {
    ClusterState::restoreReferences(bytes, nullptr, [&](std::vector<ObjectRef> refs) {
      for (const ObjectRef& r : refs) {
        if (r.copy.checkpointSeq != 0) copies.emplace(r.seq, r.copy);
      }
    });
  }
  std::uint64_t written = 0;
  for (; next <= last; next += interval) {
    replayer.foldInto(state, next);
    const std::vector<std::string> chunks = copyLongLived(state, interval, copies);
    if (Status st = ledger.putCheckpoint(next, state.serialize(copies), chunks); !st.isOk())
      throw ReplayError(st);
    ++written;
    if (progress) progress(next, last);
  }
  return written;
}
namespace {

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

}  // namespace

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
  std::string copyProblem;
  const std::uint64_t badCopies = checkCopies(ledger, &copyProblem);
  Replayer replayer(ledger);
  ClusterState fresh;
  if (const auto& cut = ledger.archiveCut()) {
    // A cut ledger folds from the checkpoint at the cut, taken as the link
    // to the archive is (it was folded from the archived records), once it
    // restores to the digest it records.
    std::string bytes;
    std::uint64_t found = 0;
    if (Status st = ledger.checkpointAtOrBefore(cut->seq, &found, &bytes); !st.isOk())
      throw ReplayError(st);
    try {
      Digest recorded{};
      if (found == cut->seq) fresh = ClusterState::restore(bytes, ledger, &recorded);
      if (found != cut->seq || fresh.seq() != cut->seq || fresh.digest() != recorded) {
        out.firstBadSeq = cut->seq;
        out.problem = "the checkpoint at the cut is missing or does not restore to its digest";
        return out;
      }
    } catch (const std::exception& e) {
      out.firstBadSeq = cut->seq;
      out.problem = std::string("the checkpoint at the cut is corrupt: ") + e.what();
      return out;
    } catch (const kj::Exception& e) {
      out.firstBadSeq = cut->seq;
      out.problem =
          std::string("the checkpoint at the cut is corrupt: ") + e.getDescription().cStr();
      return out;
    }
  }
  for (std::uint64_t seq : seqs) {
    if (badCopies != 0 && badCopies <= seq) break;
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
        out.firstBadSeq = seq;
        out.problem = "checkpoint is not what a fresh replay to the same seq writes";
        return out;
      }
    } catch (const std::exception& e) {
      out.firstBadSeq = seq;
      out.problem = std::string("checkpoint is corrupt: ") + e.what();
      return out;
    } catch (const kj::Exception& e) {
      // A copy that restores but does not decode in full: the digest reads
      // every object to its last pointer.
      out.firstBadSeq = seq;
      out.problem = std::string("checkpoint is corrupt: a copy does not decode: ") +
                    e.getDescription().cStr();
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
