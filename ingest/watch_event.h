// Turns one decoded input value into watch events (docs/reference.md, "Input"):
// a watch event {type, object[, time]}, a bare object (an upsert), or a List
// whose items are upserts (items without apiVersion/kind take them from the
// list: WorkloadList -> Workload).
//
// Pure functions; thread-safe. Errors are returned, one per rejected value or
// item, never thrown: bad input must not stop a stream.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ledger::ingest {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError, kUpsert };

struct WatchEvent {
  WatchEventType type = WatchEventType::kUpsert;
  nlohmann::json object;
  std::optional<std::int64_t> timeNs;  // from the "time" extension field
  // When not empty: `object` as the ledger stores it, written by the reader
  // (DecodedValue::storedObjectJson), so it need not be dumped again.
  std::string storedJson;
  // When not empty: the projection of the whole object (DecodedValue::
  // projection), and `object` holds only apiVersion, kind and metadata.
  std::string projection;
};

struct NormalizeResult {
  std::vector<WatchEvent> events;
  std::vector<std::string> errors;  // each a rejected value or list item
};

NormalizeResult normalizeValue(nlohmann::json value);

// The string member `key` of a JSON object: "" when `obj` is not an object,
// the member is absent or it is not a string (as a Kubernetes client reads
// an optional string field).
std::string stringMember(const nlohmann::json& obj, const char* key);

// Why an object cannot be recorded (no kind, no metadata.name, a control
// character or invalid UTF-8 in an identity field: input_limits.h), or empty.
// A Kueue Configuration (isKueueConfiguration) needs no metadata and no name.
std::string objectProblem(const nlohmann::json& object);

// A Kueue manager configuration document (config.kueue.x-k8s.io v1beta1 or
// v1beta2, kind Configuration): a file Kueue reads at start, written without
// metadata (docs/reference.md "Input" names it as a source of the DRA mapping).
bool isKueueConfiguration(std::string_view apiVersion, std::string_view kind);

}  // namespace ledger::ingest
