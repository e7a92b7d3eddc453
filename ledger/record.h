// Log records as the rest of the program sees them, and their stored bytes.
//
// A Record is what one recorded watch event became: its seq, type, time, the
// object's identity and the object JSON (managedFields removed). encodeRecord
// produces the exact bytes that are hashed and stored; decodeRecord reverses it.
//
// Value types. Errors: decodeRecord returns a Status (corruption) for bytes
// that are not a valid LogRecord; it never throws on untrusted bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ledger/sha256.h"
#include "ledger/status.h"

namespace ledger {

enum class EventType : std::uint8_t { kAdded = 0, kModified = 1, kDeleted = 2 };

const char* eventTypeName(EventType type);  // "ADDED", "MODIFIED", "DELETED"

struct ObjectIdentity {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;
  std::string namespace_;  // "" for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string resourceVersion;

  // "group/kind/namespace/name": one live object, whatever its version.
  std::string objectKey() const;
  // The same, appended to `out` (for a buffer the caller keeps).
  void appendObjectKey(std::string& out) const;
  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
  bool operator==(const ObjectIdentity&) const = default;
};

struct Record {
  std::uint64_t seq = 0;
  EventType type = EventType::kAdded;
  std::int64_t timeNs = 0;
  ObjectIdentity identity;
  std::string objectJson;
  bool operator==(const Record&) const = default;
};

class ScratchMessage;

// Encodes LogRecords for appending without gathering each in one buffer:
// the stored bytes are the parts `encode` returns, in order (the segment
// table, then each Cap'n Proto segment), byte for byte what encodeRecord
// returns. The ledger hashes the parts and hands them to RocksDB as they lie;
// joining them, as Cap'n Proto's flat array and then a string, copied every
// object twice more on the writing thread. The first segment is kept and
// reused (scratch_message.h).
//
// The parts point into the encoder and stay valid until the next encode or
// the encoder's destruction. Not thread-safe: one encoder per appending
// thread. Throws kj::Exception only on allocation failure.
class RecordEncoder {
 public:
  RecordEncoder();
  ~RecordEncoder();
  RecordEncoder(const RecordEncoder&) = delete;
  RecordEncoder& operator=(const RecordEncoder&) = delete;

  std::span<const std::string_view> encode(const Record& header, std::string_view objectJson);

 private:
  std::unique_ptr<ScratchMessage> message_;
};

// The LogRecord bytes (Cap'n Proto flat message) for `record`.
std::string encodeRecord(const Record& record);
// The same for `header` with `objectJson` in place of header.objectJson.
std::string encodeRecord(const Record& header, std::string_view objectJson);
[[nodiscard]] Status decodeRecord(std::string_view bytes, Record* out);

// hash(seq) = SHA-256(previous ++ encoded record bytes).
Digest chainHash(const Digest& previous, std::string_view encodedRecord);
// The same for a record in parts (RecordEncoder::encode), with a hasher the
// caller reuses along the chain.
Digest chainHash(const Digest& previous, std::span<const std::string_view> encodedParts,
                 Sha256& hasher);
// The same with a hasher the caller reuses along the chain: a fresh
// libcrypto context per record (allocated, initialised, freed) cost a
// sixth of each record's hash (3.82 against 3.22 us for 4.5 KB).
Digest chainHash(const Digest& previous, std::string_view encodedRecord, Sha256& hasher);

}  // namespace ledger
