// Bounds on the shape of untrusted input, shared by every reader of it
// (ValueReader for files and stdin, the watch daemon's decoder): a value that
// passes them can be parsed, converted, serialised and freed without
// exhausting the stack or the heap, so one hostile value is rejected like any
// malformed one instead of crashing the process and losing the values around
// it.
//
// Depth: nlohmann's dump() and copy, simdjson-to-nlohmann conversion
// (value_reader.cpp), the stored-JSON writer (simd_json.cpp) and YAML->JSON
// conversion (yaml_json.cpp) recurse once per level of nesting. Kubernetes
// objects nest a few dozen levels at most (an OpenAPI schema in a CRD is the
// deepest); Go's encoding/json, which the API server decodes with, stops at
// 10000. 1000 keeps every recursion far from the bottom of a default 8 MiB
// thread stack, sanitizer builds included, and rejects nothing real.
//
// Pure functions; thread-safe; never throw.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ledger::ingest {

inline constexpr std::size_t kMaxNestingDepth = 1000;

// Where a JSON text's arrays and objects first nest deeper than `maxDepth`
// (the byte offset of the bracket that opens level maxDepth + 1), counting
// brackets outside strings only; nullopt when they never do. Linear, no
// allocation: it runs before any parser builds anything.
std::optional<std::size_t> nestingTooDeepAt(std::string_view json,
                                            std::size_t maxDepth = kMaxNestingDepth);

// Whether a parsed value nests deeper than `maxDepth` (for values parsed
// whole, such as a LIST page, whose items are then checked one by one).
// Walks with its own stack, never recursing.
bool nestedDeeperThan(const nlohmann::json& value, std::size_t maxDepth = kMaxNestingDepth);

// Why an identity field's value (apiVersion, kind, metadata.name, namespace,
// uid, resourceVersion) cannot be recorded, or empty. A NUL or other C0
// control character (U+0000..U+001F) or DEL, or bytes that are not UTF-8:
// none can occur in a Kubernetes name (a DNS subdomain or label, RFC 1123),
// uid, kind or resourceVersion, and the ledger's keys are built from these
// fields. The check is deliberately more tolerant than Kubernetes' own
// validation: objects from older or foreign API servers keep being recorded.
std::string identityValueProblem(std::string_view value);

}  // namespace ledger::ingest
