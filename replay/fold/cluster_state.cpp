#include "replay/fold/cluster_state.h"

#include "schema/observation.h"

#include <capnp/message.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ledger/format.h"
#include "ledger/scratch_message.h"
#include "ledger/sha256.h"
#include "replay/fold/object_reads.h"
#include "schema/checkpoint.capnp.h"

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
// record was stored (a projection record or a checkpoint's chunk). The copy
// is one segment: the first is sized past the projection's total size, as a
// MallocMessageBuilder of totalSize + 8 words was before, so the bytes are
// the same whatever the scratch's size. The record holding the projection
// bounds its size (a copy holds no more than what it copies, plus its root
// pointer), which spares a traversal of every object to measure it. One
// scratch serves every object: a fresh message per object was megabytes of
// new memory per report.
class DigestCopies {
 public:
  void hashCopy(schema::Projection::Reader projection, std::size_t recordWords, Sha256& h) {
    const std::size_t words = recordWords + 8;
    if (words > capacity_) {
      capacity_ = std::max(words, 2 * capacity_);
      scratch_ = std::make_unique<ScratchMessage>(capacity_);
    }
    scratch_->start().setRoot(projection);
    auto parts = scratch_->parts();
    if (parts.size() > 2) {
      // Pointers that share what they point at (no builder writes them, a
      // damaged record may) copy to more than the record holds: measured
      // after all, as the copy always was.
      capacity_ = projection.totalSize().wordCount + 8;
      scratch_ = std::make_unique<ScratchMessage>(capacity_);
      scratch_->start().setRoot(projection);
      parts = scratch_->parts();
    }
    for (std::string_view part : parts) h.update(part);
  }

 private:
  std::size_t capacity_ = 0;
  std::unique_ptr<ScratchMessage> scratch_;
};

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
      "RetiredInput",
  };
  return kNames[static_cast<std::size_t>(kind)];
}

namespace {

constexpr std::string_view kConfigVersionPrefix = "c|";
constexpr std::string_view kInputVersionPrefix = "v|";

// Fixed width, so that key order is numeric order.
std::string paddedSeq(std::uint64_t seq) {
  char buf[21];
  std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(seq));
  return buf;
}

std::string configVersionKey(std::uint64_t versionSeq) {
  return std::string(kConfigVersionPrefix) + paddedSeq(versionSeq);
}

// "v|<until>|<kind>|<d or r>|<until ns>|<object key>"
std::string inputVersionKey(std::uint64_t untilSeq, std::int64_t untilNs, ObjectKind kind,
                            bool deleted, std::string_view key) {
  std::string k(kInputVersionPrefix);
  k += paddedSeq(untilSeq);
  k += '|';
  k += std::to_string(static_cast<int>(kind));
  k += deleted ? "|d|" : "|r|";
  k += std::to_string(untilNs);
  k += '|';
  k.append(key);
  return k;
}

template <typename T>
bool parseField(std::string_view& rest, T* out) {
  const auto bar = rest.find('|');
  const std::string_view field = rest.substr(0, bar);
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), *out);
  if (ec != std::errc() || end != field.data() + field.size() || bar == std::string_view::npos)
    return false;
  rest.remove_prefix(bar + 1);
  return true;
}

bool isChargeInputKind(ObjectKind kind) {
  return kind == ObjectKind::kDeviceClass || kind == ObjectKind::kResourceClaimTemplate ||
         kind == ObjectKind::kResourceSlice;
}

ChargeInput chargeInputOf(ObjectKind kind) {
  if (kind == ObjectKind::kDeviceClass) return ChargeInput::kDeviceClass;
  if (kind == ObjectKind::kResourceClaimTemplate) return ChargeInput::kResourceClaimTemplate;
  return ChargeInput::kResourceSlice;
}

}  // namespace

bool RetiredVersion::parse(std::string_view entryKey, RetiredVersion* out) {
  *out = RetiredVersion();
  if (entryKey.substr(0, 2) == kConfigVersionPrefix) {
    out->configVersion = true;
    out->kind = ObjectKind::kDraConfig;
    return true;
  }
  if (entryKey.substr(0, 2) != kInputVersionPrefix) return false;
  std::string_view rest = entryKey.substr(2);
  int kind = 0;
  if (!parseField(rest, &out->untilSeq) || !parseField(rest, &kind)) return false;
  if (kind < 0 || !isChargeInputKind(static_cast<ObjectKind>(kind))) return false;
  out->kind = static_cast<ObjectKind>(kind);
  if (rest.size() < 2 || (rest[0] != 'd' && rest[0] != 'r') || rest[1] != '|') return false;
  out->deleted = rest[0] == 'd';
  rest.remove_prefix(2);
  if (!parseField(rest, &out->untilNs)) return false;
  out->key = rest;
  return true;
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
  const auto body = record.getObject().getBody();
  auto id = record.getIdentity();
  if (!kindOf(body, &kind)) {
    // The sidecar's snapshot brackets (schema/observation.h): a workload
    // first seen reserved inside one was reserved before the ledger saw it.
    if (textView(id.getKind()) == observation::kSnapshotKind &&
        textView(id.getGroup()) == observation::kGroup) {
      history_.noteSnapshot(seq, record.getType() == schema::EventType::ADDED);
    }
    return;
  }
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
  noteHistory(kind, seq, timeNs_, record.getType() == schema::EventType::DELETED, body,
              found == index.end() ? nullptr : &found->second);
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

void ClusterState::noteHistory(ObjectKind kind, std::uint64_t seq, std::int64_t timeNs,
                               bool deleted, schema::Projection::Body::Reader body,
                               IndexEntry* found) {
  const auto versionOf = [](const IndexEntry& e) {
    return e.pendingSeq != 0 ? e.pendingSeq : e.it->second->seq();
  };
  switch (kind) {
    case ObjectKind::kWorkload: {
      // Kueue reserves quota when it sets QuotaReserved=True
      // (pkg/workload/admissionchecks.go SetQuotaReservation).
      bool reserved = false;
      if (!deleted) {
        auto wl = body.getWorkload();
        using R = schema::Workload::QuotaReservation;
        switch (wl.getQuotaReservation()) {
          case R::RESERVED:
            reserved = true;
            break;
          case R::NOT_RESERVED:
            break;
          case R::UNKNOWN:  // a projection written before the field
            for (auto c : wl.getConditions()) {
              if (c.getType() == "QuotaReserved") reserved = c.getStatus() == "True";
            }
            break;
        }
      }
      std::int64_t reservedAtNs = 0;
      if (reserved && history_.inSnapshot()) {
        for (auto c : body.getWorkload().getConditions()) {
          if (c.getType() == "QuotaReserved") reservedAtNs = c.getLastTransitionNs();
        }
      }
      if (history_.noteWorkload(scratchKey_, seq, timeNs, reserved, reservedAtNs)) pruneHistory();
      return;
    }
    case ObjectKind::kPod: {
      // scratchKey_ is "namespace/name" (every Pod is namespaced).
      const std::string_view key = scratchKey_;
      const auto slash = key.find('/');
      const std::string_view ns = key.substr(0, slash);
      const std::string_view name = key.substr(slash + 1);
      auto pod = body.getPod();
      if (!ChargeHistory::isKueueControllerPod(name, pod.getControllerManagerLabel())) return;
      if (history_.noteControllerPod(ns, name, seq, timeNs, pod.getPhase() == "Running", deleted)) {
        pruneHistory();
      }
      return;
    }
    case ObjectKind::kDeviceClass:
    case ObjectKind::kResourceClaimTemplate:
    case ObjectKind::kResourceSlice:
      history_.noteInputChange(chargeInputOf(kind), seq);
      // Only a reservation made before this record can need the version it
      // ends; every later one sees the new version.
      if (found != nullptr && history_.anyReservation())
        retire(*found, inputVersionKey(seq, timeNs, kind, deleted, scratchKey_));
      return;
    case ObjectKind::kDraConfig: {
      if (found != nullptr && history_.versionReferenced(versionOf(*found)))
        retire(*found, configVersionKey(versionOf(*found)));
      auto config = body.getDraConfig();
      if (config.getIgnored()) return;
      if (history_.noteConfigSource(scratchKey_, seq, timeNs,
                                    textView(config.getControllerNamespace()), deleted)) {
        pruneHistory();
      }
      return;
    }
    default:
      return;
  }
}

void ClusterState::retire(IndexEntry& entry, std::string key) {
  auto& map = maps_[static_cast<std::size_t>(ObjectKind::kRetiredInput)];
  auto& index = index_[static_cast<std::size_t>(ObjectKind::kRetiredInput)];
  auto [it, inserted] = map.emplace(std::move(key), std::move(entry.it->second));
  if (!inserted) return;
  index.emplace(it->first, IndexEntry{it, entry.pendingSeq});
  if (entry.pendingSeq != 0) ++pending_;
}

void ClusterState::eraseEntry(ObjectKind kind, std::string_view key) {
  auto& map = maps_[static_cast<std::size_t>(kind)];
  auto& index = index_[static_cast<std::size_t>(kind)];
  auto found = index.find(key);
  if (found == index.end()) return;
  if (found->second.pendingSeq != 0) --pending_;
  auto it = found->second.it;
  index.erase(found);
  map.erase(it);
}

void ClusterState::pruneHistory() {
  const std::uint64_t oldest = history_.oldestReservation();
  auto& map = maps_[static_cast<std::size_t>(ObjectKind::kRetiredInput)];
  // Input versions in the order they were retired: one that ended at or
  // before the oldest reservation is needed by none.
  std::vector<std::string> drop;
  for (auto it = map.lower_bound(kInputVersionPrefix); it != map.end(); ++it) {
    RetiredVersion v;
    if (!RetiredVersion::parse(it->first, &v) || v.untilSeq > oldest) break;
    drop.push_back(it->first);
  }
  history_.pruneEpochs();
  for (auto it = map.begin(); it != map.end() && it->first.starts_with(kConfigVersionPrefix);
       ++it) {
    std::uint64_t version = 0;
    const std::string_view digits = std::string_view(it->first).substr(2);
    std::from_chars(digits.data(), digits.data() + digits.size(), version);
    if (!history_.versionReferenced(version)) drop.push_back(it->first);
  }
  for (const auto& k : drop) eraseEntry(ObjectKind::kRetiredInput, k);
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
  const auto& epochs = history_.epochs();
  return epochs.empty() ? nullptr : configVersion(epochs.back().versionSeq);
}

const StoredObject* ClusterState::configVersion(std::uint64_t versionSeq) const {
  if (versionSeq == 0) return nullptr;
  for (const auto& [k, obj] : objects(ObjectKind::kDraConfig)) {
    if (obj->seq() == versionSeq) return obj.get();
  }
  return find(ObjectKind::kRetiredInput, configVersionKey(versionSeq));
}

ClusterState ClusterState::chargeInputsAt(std::uint64_t seq) const {
  ClusterState view;
  for (ObjectKind kind :
       {ObjectKind::kDeviceClass, ObjectKind::kResourceClaimTemplate, ObjectKind::kResourceSlice}) {
    for (const auto& [k, obj] : objects(kind)) {
      if (obj->seq() <= seq) view.apply(obj->seq(), obj->recordWords());
    }
  }
  const auto& retired = objects(ObjectKind::kRetiredInput);
  for (auto it = retired.lower_bound(kInputVersionPrefix); it != retired.end(); ++it) {
    RetiredVersion v;
    if (!RetiredVersion::parse(it->first, &v)) continue;
    if (v.untilSeq > seq && it->second->seq() <= seq)
      view.apply(it->second->seq(), it->second->recordWords());
  }
  view.seq_ = seq;
  return view;
}

std::size_t ClusterState::liveObjects() const {
  std::size_t n = 0;
  for (const auto& m : maps_) n += m.size();
  return n;
}

Digest ClusterState::digest() const {
  requireMaterialized();
  Sha256 h;
  DigestCopies copies;
  for (std::size_t kind = 0; kind < maps_.size(); ++kind) {
    for (const auto& [k, obj] : maps_[kind]) {
      const std::uint8_t tag = static_cast<std::uint8_t>(kind);
      h.update(&tag, 1);
      h.update(k);
      h.update("\0", 1);
      // A reader of its own, not the object's: capnp readers count what they
      // traverse in a shared limiter, so this may run beside other readers.
      capnp::FlatArrayMessageReader reader(obj->recordWords(), kStoredObjectLimits);
      copies.hashCopy(reader.getRoot<schema::ProjectedRecord>().getObject(),
                      obj->recordWords().size(), h);
    }
  }
  history_.digestInto(h);
  return h.finish();
}

}  // namespace ledger::replay
