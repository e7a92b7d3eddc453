// The object_index family's entries (ledger/format.h): which records touch an
// object, and which objects refer to a uid. These functions form and read
// them for the append, the rebuild, verify and the readers, so all agree.
//
// A record entry lists several records of one object (those of one batch):
// the key names the first, the value the later ones. The per-record keys
// (appendObjectIndexKeys) are what verify compares: each record entry
// stands for the per-record keys of the seqs it lists.
//
// Functions only; they keep nothing. Throw kj::Exception when a message does
// not decode; the decoders of stored entries never throw.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schema/projection.capnp.h"

namespace ledger {

// Appends to `out` one referrer key per uid that the projection of object
// `objectKey` in namespace `ns` names in ownerReferences and, for a
// ResourceClaim, in reservedFor. A uid named twice gives its key twice.
void appendReferrerKeys(std::string_view ns, std::string_view objectKey,
                        const schema::Projection::Reader& projection,
                        std::vector<std::string>& out);

// Appends to `out` the keys of record `seq` of object `objectKey` in
// namespace `ns`: its record key (format::objectRecordKey), then its
// referrer keys. `projection` may be null (a record without one).
void appendObjectIndexKeys(std::string_view ns, std::string_view objectKey, std::uint64_t seq,
                           const schema::Projection::Reader* projection,
                           std::vector<std::string>& out);

// The same for a stored ProjectedRecord.
void appendObjectIndexKeys(std::uint64_t seq, schema::ProjectedRecord::Reader record,
                           std::vector<std::string>& out);

// A record entry's value: the seqs in `later` (ascending, each above the
// one before and the first above `first`, the key's seq), each as its
// difference from the one before, in unsigned LEB128. Appended to `out`.
void appendLaterRecordSeqs(std::string& out, std::uint64_t first,
                           std::span<const std::uint64_t> later);

// Splits a record entry's key ('r' object key '\0' seq) into the object key
// and the first seq; false for a key of another shape.
bool parseRecordEntryKey(std::string_view key, std::string_view* objectKey, std::uint64_t* first);

// Appends to `seqs` the seqs a record entry lists: `first`, then those its
// value encodes. False, with `seqs` as it was, when the value does not
// decode: a varint cut short or longer than a 64-bit one, a difference of
// 0, or a seq past 2^64 - 1.
bool decodeRecordEntry(std::uint64_t first, std::string_view value,
                       std::vector<std::uint64_t>& seqs);

}  // namespace ledger
