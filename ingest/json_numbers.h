// JSON text to an nlohmann value without rounding an integer through a
// double (internal to ingest/ and its live source).
//
// nlohmann::json::parse reads an integer literal outside the int64 and
// uint64 ranges (18446744073709551617, -9223372036854775809) as a double,
// which keeps about 17 digits: a bare `nominalQuota: 100000000000000000000001`
// would be stored, projected and reported as 1.0000000000000001e+23. Here
// such a literal becomes a string of its digits, which is what the YAML
// reader makes of it too (yaml_json.cpp), so the ledger stores every digit
// whichever form the input took. A Kubernetes quantity reads the same from
// either form (resource.Quantity accepts a JSON number or a string), so a
// quantity stays exact; an integer field (a count, a priority) given one is
// rejected by the projection as outside its range (json_fields.h). Every
// other value, and every error and its message, is nlohmann's.
//
// Pure functions; thread-safe. Errors: as nlohmann::json::parse.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace ledger::ingest {

// nlohmann::json::parse(text), long integers kept as their digits (above).
// With allowExceptions false, a text that does not parse gives a discarded
// value instead of throwing, as nlohmann::json::parse(text, nullptr, false).
nlohmann::json parseJsonKeepingIntegers(std::string_view text, bool allowExceptions = true);

// Whether `text` is a JSON integer literal (an optional '-', then digits
// without a leading zero), the form a long integer takes as a string here.
bool isIntegerLiteral(std::string_view text);

}  // namespace ledger::ingest
