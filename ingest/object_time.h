// When the object itself says it last changed: for a late watch event (a
// backlog delivered when a watch resumes after downtime), a better time than
// the moment it was received (docs/reference.md "Observation").
//
// The candidates are the times the API server and the controllers write into
// the object: metadata.managedFields[].time (the server sets it on every
// write of a field manager, status updates included), status.conditions[]
// .lastTransitionTime, metadata.deletionTimestamp (for a DELETED event and
// for an object marked for deletion) and, for ADDED, metadata
// .creationTimestamp. The newest of them is the change's time. They have
// whole seconds: a live event, received within a second of its change, keeps
// its receipt time (lateBy).
//
// Pure functions; thread-safe; never throw (a field of the wrong type or an
// unparsable time is not a candidate).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "ingest/watch_event.h"

namespace ledger::ingest {

// The newest change time the object gives, or nullopt when it gives none.
// Read it before managedFields are dropped (prepareEvent drops them).
std::optional<std::int64_t> objectChangeTime(const nlohmann::json& object, WatchEventType type);

// How far behind its receipt an event must be for its own time to be used:
// the object's times are truncated to the second.
inline constexpr std::int64_t kLateEventNs = 1'000'000'000;

}  // namespace ledger::ingest
