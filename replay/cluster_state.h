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
// std::runtime_error on a bad checkpoint.
#pragma once

#include <capnp/serialize.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ledger.h"
#include "projection.capnp.h"
#include "sha256.h"

namespace ledger::replay {

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
  kCount,
};

const char* kindName(ObjectKind kind);  // "Workload", ... ("DraConfig" for configurations)

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
  const std::string& ns() const { return ns_; }
  const std::string& name() const { return name_; }
  const std::string& uid() const { return uid_; }
  std::uint64_t seq() const { return seq_; }
  std::int64_t timeNs() const { return timeNs_; }
  // The projection as a message of its own, in canonical form: what the
  // state digest hashes, so it does not depend on how the record was stored.
  kj::Array<capnp::word> canonicalWords() const;

 private:
  std::uint64_t seq_;
  std::int64_t timeNs_ = 0;
  kj::Array<capnp::word> words_;
  capnp::FlatArrayMessageReader reader_;
  schema::Projection::Reader root_;
  std::string ns_, name_, uid_;
};

using ObjectMap = std::map<std::string, std::unique_ptr<StoredObject>, std::less<>>;

class ClusterState {
 public:
  ClusterState() = default;
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;
  ClusterState(ClusterState&&) = default;
  ClusterState& operator=(ClusterState&&) = default;

  // Folds one record, given as the words of its serialised
  // schema::ProjectedRecord (Ledger::scanProjectionWords). Throws
  // kj::Exception when they do not decode.
  void apply(std::uint64_t seq, kj::ArrayPtr<const capnp::word> recordWords);

  const ObjectMap& objects(ObjectKind kind) const { return maps_[static_cast<std::size_t>(kind)]; }
  const StoredObject* find(ObjectKind kind, std::string_view key) const;
  const StoredObject* find(ObjectKind kind, std::string_view ns, std::string_view name) const;
  // The DRA quota configuration in force: the most recently changed source.
  const StoredObject* draConfig() const;

  std::uint64_t seq() const { return seq_; }
  std::int64_t timeNs() const { return timeNs_; }
  std::size_t liveObjects() const;

  // SHA-256 over every live object in key order: equal states, equal digests.
  Digest digest() const;

  // Checkpoint bytes: SHA-256 of the payload, then a schema::Checkpoint that
  // names each live object by the seq of the record holding its version.
  // Records are immutable, so the projection need not be copied: a
  // checkpoint costs tens of bytes per live object.
  std::string serialize() const;
  // Rebuilds a state from checkpoint bytes, reading the referenced records
  // from `ledger`. Throws std::runtime_error when the checksum fails, the
  // bytes do not decode or a referenced record is missing or does not match.
  // `storedDigest`, when given, receives the digest recorded at write time.
  static ClusterState restore(std::string_view bytes, const Ledger& ledger,
                              Digest* storedDigest = nullptr);

  static std::string key(std::string_view ns, std::string_view name);

 private:
  std::array<ObjectMap, static_cast<std::size_t>(ObjectKind::kCount)> maps_;
  std::uint64_t seq_ = 0;
  std::int64_t timeNs_ = 0;
  std::string scratchKey_;  // reused by apply(): most records replace a live object
};

}  // namespace ledger::replay
