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
}  // namespace ledger::replay
