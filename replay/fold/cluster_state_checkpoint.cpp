// ClusterState as checkpoint bytes (ledger/format.h "checkpoints": the
// format version and the SHA-256 before the schema/checkpoint.capnp message),
// and back. Beside the rest of the fold's checkpoint code (checkpoints.h) in
// spirit; a separate file from cluster_state.cpp because it is the one place
// that knows the stored layout.
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "ledger/format.h"
#include "replay/fold/cluster_state.h"
#include "replay/fold/object_reads.h"
#include "schema/checkpoint.capnp.h"

namespace ledger::replay {

std::string ClusterState::serialize(const CopiedVersions& copies) const {
  requireMaterialized();
  capnp::MallocMessageBuilder message(1 << 16);
  auto root = message.initRoot<schema::Checkpoint>();
  root.setFormatVersion(format::kCheckpointFormat);
  root.setSeq(seq_);
  root.setTimeNs(timeNs_);
  const Digest d = digest();
  root.setDigest(kj::arrayPtr(d.data(), d.size()));
  auto list = root.initObjects(static_cast<unsigned>(liveObjects()));
  unsigned i = 0;
  for (std::size_t kind = 0; kind < maps_.size(); ++kind) {
    for (const auto& [k, obj] : maps_[kind]) {
      auto o = list[i++];
      o.setKind(static_cast<std::uint8_t>(kind));
      o.setKey(k);
      o.setSeq(obj->seq());
      if (auto c = copies.find(obj->seq()); c != copies.end()) {
        o.setCopiedAt(c->second.checkpointSeq);
        o.setChunk(c->second.chunk);
      }
    }
  }
  history_.serialize(root.initChargeHistory());
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  const std::string_view payload(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
  const Digest checksum = Sha256::of(payload);
  std::string out(reinterpret_cast<const char*>(checksum.data()), checksum.size());
  out.append(payload);
  return out;
}

ClusterState ClusterState::restore(std::string_view bytes, const Ledger& ledger,
                                   Digest* storedDigest) {
  std::vector<ObjectRef> refs;
  ClusterState state = restoreReferences(bytes, storedDigest,
                                         [&](std::vector<ObjectRef> r) { refs = std::move(r); });
  ObjectReads reads(ledger, std::move(refs), std::thread::hardware_concurrency() > 1);
  Status st = state.adopt(reads);
  if (st.isOk() && state.pending_ != 0) st = Status::corruption("some objects were not read");
  if (!st.isOk()) {
    throw std::runtime_error("checkpoint references a record the ledger cannot give: " +
                             st.message());
  }
  return state;
}

ClusterState ClusterState::restoreReferences(
    std::string_view bytes, Digest* storedDigest,
    const std::function<void(std::vector<ObjectRef>)>& onRefs) {
  constexpr std::size_t kChecksum = format::kCheckpointChecksumSize;
  if (bytes.size() < kChecksum || (bytes.size() - kChecksum) % sizeof(capnp::word) != 0) {
    throw std::runtime_error("checkpoint is truncated");
  }
  const std::string_view payload = bytes.substr(kChecksum);
  const Digest checksum = Sha256::of(payload);
  if (std::memcmp(checksum.data(), bytes.data(), checksum.size()) != 0) {
    throw std::runtime_error("checkpoint fails its checksum");
  }
  auto words = kj::heapArray<capnp::word>(payload.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), payload.data(), payload.size());
  ClusterState state;
  try {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = 1ULL << 40;
    capnp::FlatArrayMessageReader reader(words.asPtr(), options);
    auto root = reader.getRoot<schema::Checkpoint>();
    if (root.getFormatVersion() != format::kCheckpointFormat) {
      throw std::runtime_error("checkpoint has format " + std::to_string(root.getFormatVersion()) +
                               ", this build reads " + std::to_string(format::kCheckpointFormat) +
                               " (`ledger-replay checkpoint --rewrite` writes them anew)");
    }
    state.seq_ = root.getSeq();
    state.history_.restore(root.getChargeHistory());
    state.timeNs_ = root.getTimeNs();
    const auto objects = root.getObjects();
    std::vector<ObjectRef> refs;
    refs.reserve(objects.size());
    for (auto o : objects) {
      // A copy is written by a checkpoint after the record and no later
      // than this one.
      if (o.getKind() >= static_cast<std::uint8_t>(ObjectKind::kCount) || o.getSeq() == 0 ||
          o.getSeq() > state.seq_ ||
          (o.getCopiedAt() != 0 &&
           (o.getCopiedAt() < o.getSeq() || o.getCopiedAt() > state.seq_))) {
        throw std::runtime_error("checkpoint names an impossible object");
      }
      refs.push_back(ObjectRef{o.getSeq(), CheckpointChunkId{o.getCopiedAt(), o.getChunk()}});
    }
    std::sort(refs.begin(), refs.end(),
              [](const ObjectRef& a, const ObjectRef& b) { return a.seq < b.seq; });
    // One record holds one object's version: a seq named twice is corruption.
    if (std::adjacent_find(refs.begin(), refs.end(), [](const ObjectRef& a, const ObjectRef& b) {
          return a.seq == b.seq;
        }) != refs.end()) {
      throw std::runtime_error("checkpoint names one record for two objects");
    }
    // A point-in-time query reads these while the maps below are built.
    if (onRefs) onRefs(std::move(refs));
    for (auto o : objects) {
      state.putPending(static_cast<ObjectKind>(o.getKind()), o.getKey().cStr(), o.getSeq());
    }
    if (storedDigest != nullptr) {
      auto stored = root.getDigest();
      if (stored.size() != storedDigest->size())
        throw std::runtime_error("checkpoint digest is malformed");
      std::memcpy(storedDigest->data(), stored.begin(), stored.size());
    }
  } catch (const kj::Exception& e) {
    throw std::runtime_error(std::string("checkpoint does not decode: ") +
                             e.getDescription().cStr());
  }
  return state;
}

}  // namespace ledger::replay
