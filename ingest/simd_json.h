// Helpers over simdjson's DOM for ValueReader's fast path (internal to
// ingest/): where an element sits in a watch stream value, and the JSON the
// ledger stores for a watched object, written straight from the DOM.
//
// Stored JSON: the ledger keeps a watched object as nlohmann::json::dump()
// of its value with metadata.managedFields erased (ingester.cpp). Writing
// that text from simdjson's tape skips building and dumping an nlohmann
// value (a quarter of ingest's reading thread). It must be byte for byte
// what dump() writes for the value ValueReader builds from the same element,
// because the chain hash and idempotency keys cover those bytes:
// - object members sorted by key (nlohmann's std::map), the last of
//   duplicate keys kept;
// - strings escaped as nlohmann does without ensure_ascii: \" \\ \b \f \n
//   \r \t, other bytes below 0x20 as \u00xx (lower-case hex), all else raw;
// - integers in decimal; doubles through nlohmann itself (rare in objects).
// The caller only writes elements that ValueReader's fast path accepted
// (no -0, no escaped surrogates), where the two agree.
//
// Pure functions; thread-safe; never throw except std::bad_alloc.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ledger::ingest {

// Where an element sits, decided as normalizeValue() decides a value's form
// (watch_event.cpp): only the object it hands on is a watched object.
enum class JsonRole : std::uint8_t {
  kPlain,     // nothing to do with the watched object
  kEvent,     // {"type": "...", "object": {...}}: "object" is the watched object
  kList,      // {"kind": "...List", "items": [...]}: each item is one
  kObject,    // a watched object: its "metadata" drops managedFields
  kMetadata,  // a watched object's metadata
};

// The role of a whole value (the last of duplicate keys wins, as in nlohmann).
JsonRole rootRole(simdjson::dom::element root);
// The role of member `key` of an object with role `parent` (kPlain for most).
// Callers skip "managedFields" under kMetadata themselves.
JsonRole memberRole(JsonRole parent, std::string_view key);
// The role of the elements of an array with role `parent`.
inline JsonRole elementRole(JsonRole parent) {
  return parent == JsonRole::kList ? JsonRole::kObject : JsonRole::kPlain;
}

// Appends the stored JSON of `element` (role kObject: a watched object,
// managedFields left out; kPlain: as it is) to `out`. Returns whether it
// wrote a double -0.0 (a value ValueReader leaves to nlohmann).
bool appendStoredJson(simdjson::dom::element element, JsonRole role, std::string& out);

// The stored JSON of the watched object of a value whose root role is
// kEvent (its last "object" member) or kObject (the value); false for other
// forms (a List: normalizeValue completes each item first). `negativeZero`,
// when given, says whether the text holds a double -0.0.
bool storedWatchedObject(simdjson::dom::element root, JsonRole role, std::string& out,
                         bool* negativeZero = nullptr);

}  // namespace ledger::ingest
