// The object_index family's keys (ledger/format.h): which records touch an
// object, and which objects refer to a uid. These functions form them for the
// append, the rebuild and verify, so the three agree.
//
// Functions only; they keep nothing. Throw kj::Exception when a message does
// not decode.
#pragma once

#include <cstdint>
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

}  // namespace ledger
