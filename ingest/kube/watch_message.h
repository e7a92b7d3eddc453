// What an informer hands the daemon's writer: the resource it watches, as
// discovery resolved it, and each LIST marker, LIST item and watch event.
//
// Value types; thread-compatible (a message moves from an informer's thread
// to the writer's through LedgerWriter::push).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "ingest/watch_event.h"

namespace ledger::kube {

inline constexpr const char* kSynthesizedAnnotation = "kueue-dra-ledger/synthesized";

// What an informer found out about the resource it watches.
struct ResolvedResource {
  std::string id;  // ResourceSpec::id()
  std::string group, version, kind;
  std::string namespace_, name;  // the watch's scope ("" = all)

  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
  std::string watchSource() const { return "watch:" + id; }
  std::string relistSource() const { return "relist:" + id; }
  // The cursor whose position is the last moment (ns) the watch was known
  // current: every event, bookmark and sync moves it, and a clean stop.
  std::string currentSource() const { return "current:" + id; }
  // The ledger's live-object keys this watch covers start with this.
  std::string livePrefix() const;
  bool covers(const std::string& objectKey) const;
};

struct WatchMessage {
  // kSynced: the watch resumed from the ledger's cursor without a LIST;
  // kAbsent: no API serves the resource (it lists nothing for now).
  enum class Type { kListBegin, kListItem, kListEnd, kEvent, kSynced, kAbsent };
  Type type = Type::kEvent;
  std::shared_ptr<const ResolvedResource> resource;
  ingest::WatchEvent event;     // kListItem: the object (kUpsert); kEvent: the event
  std::string resourceVersion;  // kListEnd: the list's
  std::shared_ptr<const std::unordered_set<std::string>> listed;  // kListEnd: object keys
  std::int64_t receivedNs = 0;                                    // ingest clock
  bool expired = false;  // kListBegin: a relist because the watch's resourceVersion expired
  // kEvent: when the watch connection that delivered it was opened (ingest
  // clock). A change the object dates before that was missed while no
  // watch was open: a backlog, late (late_events.h).
  std::int64_t watchSinceNs = 0;
};

}  // namespace ledger::kube
