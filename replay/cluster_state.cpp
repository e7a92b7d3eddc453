#include "cluster_state.h"

#include <capnp/message.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "checkpoint.capnp.h"
#include "object_reads.h"

namespace ledger::replay {

namespace {

// capnp::word is not copyable (by design, so words are not copied by
// accident): copy the bytes.
kj::Array<capnp::word> copyWords(kj::ArrayPtr<const capnp::word> words) {
  auto out = kj::heapArray<capnp::word>(words.size());
  if (words.size() != 0)
    std::memcpy(out.begin(), words.begin(), words.size() * sizeof(capnp::word));
  return out;
}

// The form the state digest hashes: capnp::messageToFlatArray of a copy of
// the projection as a message of its own, so it does not depend on how the
// record was stored (a projection record or a checkpoint's chunk).
kj::Array<capnp::word> copyMessage(schema::Projection::Reader projection) {
  capnp::MallocMessageBuilder builder(projection.totalSize().wordCount + 8);
  builder.setRoot(projection);
  return capnp::messageToFlatArray(builder);
}

// Which map an object belongs in, from its projected body.
bool kindOf(schema::Projection::Body::Reader body, ObjectKind* kind) {
  using B = schema::Projection::Body;
  switch (body.which()) {
    case B::WORKLOAD:
      *kind = ObjectKind::kWorkload;
      return true;
    case B::CLUSTER_QUEUE:
      *kind = ObjectKind::kClusterQueue;
      return true;
    case B::COHORT:
      *kind = ObjectKind::kCohort;
      return true;
    case B::LOCAL_QUEUE:
      *kind = ObjectKind::kLocalQueue;
      return true;
    case B::RESOURCE_FLAVOR:
      *kind = ObjectKind::kResourceFlavor;
      return true;
    case B::NAMESPACE:
      *kind = ObjectKind::kNamespace;
      return true;
    case B::POD:
      *kind = ObjectKind::kPod;
      return true;
    case B::DEVICE_CLASS:
      *kind = ObjectKind::kDeviceClass;
      return true;
    case B::RESOURCE_CLAIM_TEMPLATE:
      *kind = ObjectKind::kResourceClaimTemplate;
      return true;
    case B::RESOURCE_CLAIM:
      *kind = ObjectKind::kResourceClaim;
      return true;
    case B::RESOURCE_SLICE:
      *kind = ObjectKind::kResourceSlice;
      return true;
    case B::DRA_CONFIG:
      *kind = ObjectKind::kDraConfig;
      return true;
    case B::OTHER:
      return false;
  }
  return false;
}

std::string identityKey(schema::ObjectIdentity::Reader id) {
  std::string key = id.getGroup().cStr();
  key += '/';
  key += id.getKind().cStr();
  key += '/';
  key += id.getNamespace().cStr();
  key += '/';
  key += id.getName().cStr();
  return key;
}

// A stored object's reader lives as long as the object and is read by every
// report and query over it; capnp's traversal limit (a defence against
// amplification of untrusted input) would otherwise run out on a long-lived
// object. Every pointer is still bounds-checked as it is followed; a fold
// follows few (identity, kind), so a damaged record can fold and fail later,
// in whatever reads the damaged part (cluster_state.h, "Errors").
const capnp::ReaderOptions kStoredObjectLimits = [] {
  capnp::ReaderOptions o;
  o.traversalLimitInWords = std::numeric_limits<std::uint64_t>::max();
  return o;
}();

}  // namespace

const char* kindName(ObjectKind kind) {
  static constexpr const char* kNames[] = {
      "Workload",      "ClusterQueue",   "Cohort",
      "LocalQueue",    "ResourceFlavor", "Namespace",
      "Pod",           "DeviceClass",    "ResourceClaimTemplate",
      "ResourceClaim", "ResourceSlice",  "DraConfig",
  };
  return kNames[static_cast<std::size_t>(kind)];
}

StoredObject::StoredObject(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords)
    : seq_(seq), words_(copyWords(recordWords)), reader_(words_.asPtr(), kStoredObjectLimits) {
  auto record = reader_.getRoot<schema::ProjectedRecord>();
  timeNs_ = record.getTimeNs();
  root_ = record.getObject();
  auto id = record.getIdentity();
  ns_ = textView(id.getNamespace());
  name_ = textView(id.getName());
  uid_ = textView(id.getUid());
}

std::string ClusterState::key(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string k;
  k.reserve(ns.size() + name.size() + 1);
  k.append(ns).push_back('/');
  k.append(name);
  return k;
}

void ClusterState::apply(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords) {
  fold(seq, recordWords, true);
}

void ClusterState::applyDeferred(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords) {
  fold(seq, recordWords, false);
}

void ClusterState::fold(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords, bool copy) {
  capnp::ReaderOptions limits;
  limits.traversalLimitInWords = 1ULL << 30;
  capnp::FlatArrayMessageReader reader(recordWords, limits);
  auto record = reader.getRoot<schema::ProjectedRecord>();
  seq_ = seq;
  timeNs_ = record.getTimeNs();
  ObjectKind kind;
  if (!kindOf(record.getObject().getBody(), &kind)) return;
  auto id = record.getIdentity();
  // Several objects can carry the DRA configuration; keep each by its identity.
  if (kind == ObjectKind::kDraConfig) {
    scratchKey_ = identityKey(id);
  } else {
    const auto ns = id.getNamespace();
    const auto name = id.getName();
    scratchKey_.clear();
    if (ns.size() != 0) scratchKey_.append(ns.begin(), ns.size()).push_back('/');
    scratchKey_.append(name.begin(), name.size());
  }
  auto& map = maps_[static_cast<std::size_t>(kind)];
  auto& index = index_[static_cast<std::size_t>(kind)];
  auto found = index.find(scratchKey_);
  if (record.getType() == schema::EventType::DELETED) {
    if (found != index.end()) {
      if (found->second.pendingSeq != 0) --pending_;
      auto it = found->second.it;
      index.erase(found);
      map.erase(it);
    }
    return;
  }
  std::unique_ptr<StoredObject> obj;
  std::uint64_t pendingSeq = seq;
  if (copy) {
    obj = std::make_unique<StoredObject>(seq, recordWords);
    pendingSeq = 0;
  }
  if (found != index.end()) {
    IndexEntry& entry = found->second;
    if (entry.pendingSeq != 0) --pending_;
    entry.pendingSeq = pendingSeq;
    entry.it->second = std::move(obj);
  } else {
    auto it = map.emplace(scratchKey_, std::move(obj)).first;
    index.emplace(it->first, IndexEntry{it, pendingSeq});
  }
  if (pendingSeq != 0) ++pending_;
}

std::vector<std::uint64_t> ClusterState::pendingSeqs() const {
  std::vector<std::uint64_t> seqs;
  seqs.reserve(pending_);
  for (const auto& index : index_) {
    for (const auto& [key, entry] : index) {
      if (entry.pendingSeq != 0) seqs.push_back(entry.pendingSeq);
    }
  }
  // Seq order reads the projection family front to back, each block once.
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

Status ClusterState::adopt(ObjectReads& reads) {
  if (Status st = reads.finish(); !st.isOk()) return st;
  const std::vector<std::uint64_t>& seqs = reads.seqs();
  std::vector<std::unique_ptr<StoredObject>>& objects = reads.objects();
  std::vector<IndexEntry*> todo;
  todo.reserve(pending_);
  for (auto& index : index_) {
    for (auto& [key, entry] : index) {
      if (entry.pendingSeq != 0) todo.push_back(&entry);
    }
  }
  std::sort(todo.begin(), todo.end(),
            [](const IndexEntry* a, const IndexEntry* b) { return a->pendingSeq < b->pendingSeq; });
  // Both ascending: one merge. A seq read for nothing (its object replaced
  // or deleted since) is skipped; an entry without its object stays pending.
  std::size_t i = 0;
  for (IndexEntry* entry : todo) {
    while (i < seqs.size() && seqs[i] < entry->pendingSeq) ++i;
    if (i == seqs.size()) break;
    if (seqs[i] != entry->pendingSeq || objects[i] == nullptr) continue;
    entry->it->second = std::move(objects[i]);
    entry->pendingSeq = 0;
    --pending_;
  }
  return Status::ok();
}

Status ClusterState::materialize(const Ledger& ledger) {
  if (pending_ == 0) return Status::ok();
  // A point-in-time query spends most of its time here: a couple of
  // thousand lookups of records scattered over the whole history, each a
  // block read and decompression. A large set is read on two threads.
  constexpr std::size_t kParallelFrom = 512;
  const bool helper = pending_ >= kParallelFrom && std::thread::hardware_concurrency() > 1;
  ObjectReads reads(ledger, pendingSeqs(), helper);
  if (Status st = adopt(reads); !st.isOk()) return st;
  if (pending_ != 0) return Status::corruption("materialize: some objects were not read");
  return Status::ok();
}

void ClusterState::throwPending() {
  throw std::logic_error("ClusterState read before materialize()");
}

void ClusterState::putPending(ObjectKind kind, std::string_view key, std::uint64_t seq) {
  auto& map = maps_[static_cast<std::size_t>(kind)];
  auto& index = index_[static_cast<std::size_t>(kind)];
  auto found = index.find(key);
  if (found != index.end()) {
    if (found->second.pendingSeq == 0) ++pending_;
    found->second.pendingSeq = seq;
    found->second.it->second.reset();
    return;
  }
  // A checkpoint lists each kind's objects in key order: a hint at the end
  // makes each insertion constant time (any order stays correct).
  auto it = map.emplace_hint(map.end(), std::string(key), nullptr);
  index.emplace(it->first, IndexEntry{it, seq});
  ++pending_;
}

const StoredObject* ClusterState::find(ObjectKind kind, std::string_view key) const {
  requireMaterialized();
  const auto& index = index_[static_cast<std::size_t>(kind)];
  auto it = index.find(key);
  return it == index.end() ? nullptr : it->second.it->second.get();
}

const StoredObject* ClusterState::find(ObjectKind kind, std::string_view ns,
                                       std::string_view name) const {
  return find(kind, key(ns, name));
}

const StoredObject* ClusterState::draConfig() const {
  const StoredObject* newest = nullptr;
  for (const auto& [k, obj] : objects(ObjectKind::kDraConfig)) {
    if (newest == nullptr || obj->seq() > newest->seq()) newest = obj.get();
  }
  return newest;
}

std::size_t ClusterState::liveObjects() const {
  std::size_t n = 0;
  for (const auto& m : maps_) n += m.size();
  return n;
}

Digest ClusterState::digest() const {
  requireMaterialized();
  Sha256 h;
  for (std::size_t kind = 0; kind < maps_.size(); ++kind) {
    for (const auto& [k, obj] : maps_[kind]) {
      const std::uint8_t tag = static_cast<std::uint8_t>(kind);
      h.update(&tag, 1);
      h.update(k);
      h.update("\0", 1);
      // A reader of its own, not the object's: capnp readers count what they
      // traverse in a shared limiter, so this may run beside other readers.
      capnp::FlatArrayMessageReader reader(obj->recordWords(), kStoredObjectLimits);
      const auto words = copyMessage(reader.getRoot<schema::ProjectedRecord>().getObject());
      h.update(words.asBytes().begin(), words.asBytes().size());
    }
  }
  return h.finish();
}

std::string ClusterState::serialize(const CopiedVersions& copies) const {
  requireMaterialized();
  capnp::MallocMessageBuilder message(1 << 16);
  auto root = message.initRoot<schema::Checkpoint>();
  root.setFormatVersion(2);
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
  if (bytes.size() < 32 || (bytes.size() - 32) % sizeof(capnp::word) != 0) {
    throw std::runtime_error("checkpoint is truncated");
  }
  const std::string_view payload = bytes.substr(32);
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
    if (root.getFormatVersion() != 2) throw std::runtime_error("checkpoint has an unknown format");
    state.seq_ = root.getSeq();
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
