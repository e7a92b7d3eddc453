// The folded state of a Kueue installation: every live object replay needs,
// kept as its Cap'n Proto projection (compact, no JSON), keyed by
// "namespace/name" ("name" for cluster-scoped objects) in sorted maps so that
// iteration order - and everything printed from it - is deterministic.
//
// Memory grows with the number of live objects, never with the log: DELETED
// removes, MODIFIED replaces, kinds replay does not interpret are not kept.
//
// Ownership: a ClusterState owns its objects; readers handed out are valid
// until the object is replaced or removed (the next apply()).
// Thread safety: const methods may be called concurrently; apply() may not.
// Errors: apply() never throws for well-formed projections; restore() throws
// std::runtime_error on a bad checkpoint. Cap'n Proto checks a pointer when
// it is followed, and folding follows few (identity, kind), so a damaged
// stored object (projection or checkpoint copy) can fold and then throw
// kj::Exception from whatever first reads the damaged part: a projection()
// reader or digest() (buildReport() turns it into a ReplayError, report.h).
// `ledger-replay verify` decodes every projection in full, and every
// checkpoint's copies, to find it.
#pragma once

#include <capnp/serialize.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ledger/ledger.h"
#include "ledger/sha256.h"
#include "replay/fold/charge_history.h"
#include "schema/projection.capnp.h"

namespace ledger::replay {

// A capnp text as a view, valid as long as the message that holds it.
inline std::string_view textView(capnp::Text::Reader text) { return {text.begin(), text.size()}; }

class ObjectReads;

enum class ObjectKind : std::uint8_t {
  kWorkload,
  kClusterQueue,
  kCohort,
  kLocalQueue,
  kResourceFlavor,
  kNamespace,
  kPod,
  kDeviceClass,
  kResourceClaimTemplate,
  kResourceClaim,
  kResourceSlice,
  kDraConfig,
  // Versions of charge inputs (DeviceClasses, ResourceClaimTemplates,
  // ResourceSlices) replaced or deleted while some workload held a
  // reservation that may need them, and DraConfig versions an epoch of the
  // mapping still names (charge_history.h). Keyed so that RetiredVersion
  // reads them back and key order is the order they were retired in.
  kRetiredInput,
  kCount,
};

const char* kindName(ObjectKind kind);  // "Workload", ... ("DraConfig" for configurations)

// A kRetiredInput entry's key, read back.
struct RetiredVersion {
  bool configVersion = false;  // a DraConfig version an epoch names
  std::uint64_t untilSeq = 0;  // the record that replaced or deleted it
  std::int64_t untilNs = 0;
  ObjectKind kind = ObjectKind::kCount;
  bool deleted = false;
  std::string_view key;  // the object's key (views the entry's key)
  static bool parse(std::string_view entryKey, RetiredVersion* out);
};

// One live object: the record that holds its current version, kept as the
// serialised schema::ProjectedRecord words (one copy of what the ledger
// stored) and read in place. Copying the projection into a message of its
// own cost two copies and three allocations per record and dominated replay.
class StoredObject {
 public:
  // Copies `recordWords`. Throws kj::Exception when they do not decode.
  StoredObject(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords);
  StoredObject(const StoredObject&) = delete;
  StoredObject& operator=(const StoredObject&) = delete;

  schema::Projection::Reader projection() const { return root_; }
  // Views into the stored record: valid as long as this object.
  std::string_view ns() const { return ns_; }
  std::string_view name() const { return name_; }
  std::string_view uid() const { return uid_; }
  std::uint64_t seq() const { return seq_; }
  std::int64_t timeNs() const { return timeNs_; }
  // The serialised schema::ProjectedRecord this object was read from.
  kj::ArrayPtr<const capnp::word> recordWords() const { return words_.asPtr(); }

 private:
  std::uint64_t seq_;
  std::int64_t timeNs_ = 0;
  kj::Array<capnp::word> words_;
  capnp::FlatArrayMessageReader reader_;
  schema::Projection::Reader root_;
  std::string_view ns_, name_, uid_;
};

using ObjectMap = std::map<std::string, std::unique_ptr<StoredObject>, std::less<>>;

// Where a checkpoint says an object's version is: the record `seq`, read
// from the projection family, or from the chunk `copy` when it names one
// (copy.checkpointSeq != 0).
struct ObjectRef {
  std::uint64_t seq = 0;
  CheckpointChunkId copy;
};

// Which chunk holds a copy of each version that has one, by seq.
using CopiedVersions = std::unordered_map<std::uint64_t, CheckpointChunkId>;

class ClusterState {
 public:
  ClusterState() = default;
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;
  ClusterState(ClusterState&&) = default;
  ClusterState& operator=(ClusterState&&) = default;

  // Folds one record, given as the words of its serialised
  // schema::ProjectedRecord (Ledger::scanProjectionWords), copying it.
  // Throws kj::Exception when they do not decode.
  void apply(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords);
  // The same without the copy: notes which record holds each object's
  // version, and materialize() reads the survivors from the ledger once. A
  // long fold replaces most objects many times, so copying every record
  // (what apply() does) was most of a replay's cost. Until materialize()
  // succeeds, the readers below throw std::logic_error.
  void applyDeferred(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords);
  // Reads every object applyDeferred() left pending, in seq order (a large
  // set in two halves on two threads; Ledger reads may run concurrently).
  // Returns the ledger's status (a record missing or not decoding) on
  // failure; the state then stays pending and may be materialized again.
  [[nodiscard]] Status materialize(const Ledger& ledger);
  bool materialized() const { return pending_ == 0; }
  // The seqs of the pending objects, ascending (what materialize() reads).
  std::vector<std::uint64_t> pendingSeqs() const;
  // Finishes `reads` (ObjectReads::finish) and gives each pending object the
  // version it read. Versions no longer pending - replaced or deleted by a
  // fold since - are left in `reads`; objects without a read version stay
  // pending. Returns the first failed read's status, adopting nothing then.
  [[nodiscard]] Status adopt(ObjectReads& reads);

  const ObjectMap& objects(ObjectKind kind) const {
    requireMaterialized();
    return maps_[static_cast<std::size_t>(kind)];
  }
  const StoredObject* find(ObjectKind kind, std::string_view key) const;
  const StoredObject* find(ObjectKind kind, std::string_view ns, std::string_view name) const;
  // The DRA quota configuration in force at this state's seq (the newest
  // epoch's version), or nullptr.
  const StoredObject* draConfig() const;
  // A DraConfig version by its record's seq, live or kept for an epoch.
  const StoredObject* configVersion(std::uint64_t versionSeq) const;
  // Reservations, configuration epochs and input changes (charge_history.h).
  const ChargeHistory& chargeHistory() const { return history_; }
  // The charge inputs (DeviceClasses, ResourceClaimTemplates,
  // ResourceSlices) as they were after record `seq`, which must not precede
  // the oldest reservation: a materialized state holding copies of just
  // those objects. The mapping then is chargeHistory().epochAt(seq).
  ClusterState chargeInputsAt(std::uint64_t seq) const;

  std::uint64_t seq() const { return seq_; }
  std::int64_t timeNs() const { return timeNs_; }
  std::size_t liveObjects() const;

  // SHA-256 over every live object in key order: equal states, equal digests.
  // Reads the objects through readers of its own, so it may run on another
  // thread beside any other const use of this state.
  Digest digest() const;

  // Checkpoint bytes: SHA-256 of the payload, then a schema::Checkpoint that
  // names each live object by the seq of the record holding its version.
  // Records are immutable, so the projection need not be copied: a
  // checkpoint costs tens of bytes per live object. `copies` says which
  // versions are read from a chunk of copies instead (replay/fold/checkpoints.h).
  std::string serialize(const CopiedVersions& copies = {}) const;
  // Rebuilds a state from checkpoint bytes, reading the referenced records
  // from `ledger`. Throws std::runtime_error when the checksum fails, the
  // bytes do not decode or a referenced record is missing or does not match.
  // `storedDigest`, when given, receives the digest recorded at write time.
  static ClusterState restore(std::string_view bytes, const Ledger& ledger,
                              Digest* storedDigest = nullptr);
  // The same without reading the records: every object is left pending for
  // materialize(), which reads them in seq order together with whatever a
  // fold after the checkpoint changes. Throws like restore() for everything
  // but a missing record, which materialize() reports (materialize() reads
  // the projection family; copies are read only by whoever takes `onRefs`).
  // `onRefs`, when given, receives where each object is (ascending by seq)
  // once the bytes are validated and before the maps are built, so that
  // reading them can start meanwhile (ObjectReads).
  static ClusterState restoreReferences(
      std::string_view bytes, Digest* storedDigest = nullptr,
      const std::function<void(std::vector<ObjectRef>)>& onRefs = {});

  static std::string key(std::string_view ns, std::string_view name);

 private:
  void fold(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords, bool copy);
  struct IndexEntry;
  // Keeps the version `entry` holds as a kRetiredInput entry under `key`.
  void retire(IndexEntry& entry, std::string key);
  void eraseEntry(ObjectKind kind, std::string_view key);
  // Drops retired versions and epochs that no reservation can need.
  void pruneHistory();
  // The charge-history side of folding one record (charge_history.h).
  void noteHistory(ObjectKind kind, std::uint64_t seq, std::int64_t timeNs, bool deleted,
                   schema::Projection::Body::Reader body, IndexEntry* found);
  void putPending(ObjectKind kind, std::string_view key, std::uint64_t seq);
  void requireMaterialized() const {
    if (pending_ != 0) throwPending();
  }
  [[noreturn]] static void throwPending();

  // maps_ keeps the objects in key order (what readers iterate); index_
  // finds them by hash, since nearly every record replaces a live object and
  // a tree walk comparing long "namespace/name" keys dominated the fold.
  // index_ views map keys and holds map iterators, which stay valid across
  // inserts, other erasures and moves of the map. A pending entry's object
  // is null until materialize() reads the record `pendingSeq`.
  struct IndexEntry {
    ObjectMap::iterator it;
    std::uint64_t pendingSeq = 0;
  };
  using ObjectIndex = std::unordered_map<std::string_view, IndexEntry>;
  std::array<ObjectMap, static_cast<std::size_t>(ObjectKind::kCount)> maps_;
  std::array<ObjectIndex, static_cast<std::size_t>(ObjectKind::kCount)> index_;
  ChargeHistory history_;
  std::uint64_t seq_ = 0;
  std::int64_t timeNs_ = 0;
  std::size_t pending_ = 0;  // index entries with a pendingSeq
  std::string scratchKey_;   // reused by fold(): most records replace a live object
};

}  // namespace ledger::replay
