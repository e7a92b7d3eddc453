// Filling the Cap'n Proto messages the ledger stores from Record values: one
// place for the field order, which is part of the stored bytes (a field set
// earlier lands earlier in the segment, and equal ingests compare chain
// hashes).
//
// Functions only; they write into the builder they are given and keep
// nothing. Thread safety: as the builder's. The fillers throw kj::Exception
// only when the message cannot grow (allocation failure); readIdentity when
// the message does not decode.
#pragma once

#include <string_view>

#include "ledger/record.h"
#include "schema/log.capnp.h"

namespace ledger {

// The identity fields, in schema order.
void setIdentity(schema::ObjectIdentity::Builder out, const ObjectIdentity& identity);
// The identity a message holds. Throws kj::Exception when it does not decode.
ObjectIdentity readIdentity(schema::ObjectIdentity::Reader in);

// A LogRecord: seq, type, time, identity, then the object JSON.
void fillLogRecord(schema::LogRecord::Builder out, const Record& header,
                   std::string_view objectJson);

}  // namespace ledger
