// JSON helpers for simulated Kubernetes objects: RFC 3339 times, quantities,
// and metadata.managedFields derived from the fields each manager owns, as
// the API server sends them (FieldsV1 sets: "f:" fields, "k:" list keys,
// "." for the map or list item itself).
//
// Objects are nlohmann::ordered_json so keys keep the API server's order
// (apiVersion, kind, metadata, spec, status) rather than sorted order.
// Pure functions; thread-safe; throw only std::bad_alloc.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ledger::gen {

using J = nlohmann::ordered_json;

// "2026-11-20T08:00:00Z" (seconds) or "2026-11-20T08:00:00.123Z" (millis).
std::string rfc3339(std::int64_t ns, bool millis = false);

// "1500m" / "2" for millicores; "8Gi" / "4864Mi" for mebibytes.
std::string cpuQuantity(std::int64_t milli);
std::string memQuantity(std::int64_t mebi);

// The FieldsV1 set of `owned` (an object holding the owned fields).
J fieldsV1(const J& owned);

// One managedFields entry: `owned` holds the subset of the object this
// manager wrote (e.g. {"metadata": {...}, "spec": {...}}).
J managedEntry(const char* manager, const char* operation, const std::string& apiVersion,
               std::int64_t timeNs, const J& owned, const char* subresource = nullptr);

// Raw JSON splicing, so the parts of an object that stay the same across its
// events (a pod's spec, a manager's entry) are built and printed once:
// rawSlot(i) is a placeholder value; dumpWithRaw prints `j` with placeholder
// i replaced by *raws[i] (which must be valid JSON).
J rawSlot(int i);
std::string dumpWithRaw(const J& j, std::initializer_list<const std::string*> raws);

// The metadata fields a controller owns: everything but the API server's own
// (name, namespace, uid, resourceVersion, generation, creationTimestamp).
J ownedMetadata(const J& metadata);

}  // namespace ledger::gen
