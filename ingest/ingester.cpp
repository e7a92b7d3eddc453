#include "ingest/ingester.h"

#include <spdlog/spdlog.h>

#include <initializer_list>
#include <string_view>

#include "ingest/projector.h"
#include "ingest/watch_event.h"
#include "ledger/sha256.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::ingest {

namespace {

EventType toEventType(WatchEventType t) {
  switch (t) {
    case WatchEventType::kModified:
      return EventType::kModified;
    case WatchEventType::kDeleted:
      return EventType::kDeleted;
    default:
      return EventType::kAdded;
  }
}

// A watch event's dedupe key (ledger/format.h): uid and resourceVersion
// under the object's group and kind, since objects of different kinds may
// share both (a uid is unique per object only among what one API server
// stores; inputs merge streams).
// Parts joined by NUL bytes, which no identity field may hold (watch_event.h).
std::string nulJoined(std::initializer_list<std::string_view> parts) {
  std::string key;
  bool first = true;
  for (std::string_view part : parts) {
    if (!first) key.push_back('\0');
    key += part;
    first = false;
  }
  return key;
}

std::string eventKey(const ObjectIdentity& id, EventType type) {
  return nulJoined({"k", id.group, id.kind, id.uid, id.resourceVersion, eventTypeName(type)});
}

// The key earlier builds wrote, without the kind (ledger/format.h).
std::string legacyEventKey(const ObjectIdentity& id, EventType type) {
  return nulJoined({"e", id.uid, id.resourceVersion, eventTypeName(type)});
}

// " line N" when the reader knew the line, else " position N" (bytes read
// after the event, or events seen by a watch).
std::string where(std::uint64_t line, std::uint64_t position) {
  return line != 0 ? " line " + std::to_string(line) : " position " + std::to_string(position);
}

std::string contentKey(const ObjectIdentity& id, std::string_view tag, const std::string& json) {
  std::string key = "c";
  key.push_back('\0');
  key += id.objectKey();
  key.push_back('\0');
  key += tag;
  key.push_back('\0');
  key += toHex(Sha256::of(json));
  return key;
}

}  // namespace

std::string dedupeKeyOf(const Record& record) {
  // The keys record() forms: by (uid, resourceVersion, type) when the object
  // has both, else only for a deletion, by its content.
  const ObjectIdentity& id = record.identity;
  if (!id.uid.empty() && !id.resourceVersion.empty()) return eventKey(id, record.type);
  if (record.type == EventType::kDeleted) {
    return contentKey(id, eventTypeName(record.type), record.objectJson);
  }
  return {};
}

PendingRecord pendingRecordOf(Record record, const ProjectionOptions& options) {
  PendingRecord out;
  out.dedupeKey = dedupeKeyOf(record);
  const ObjectIdentity& id = record.identity;
  // record() keeps the digest of a manifest's version (no uid or
  // resourceVersion) in its live entry, for the next version to compare.
  if ((id.uid.empty() || id.resourceVersion.empty()) && record.type != EventType::kDeleted) {
    out.contentHash = Sha256::of(record.objectJson);
  }
  out.projection = projectJsonText(record.objectJson, options);
  out.type = record.type;
  out.timeNs = record.timeNs;
  out.identity = std::move(record.identity);
  out.objectJson = std::move(record.objectJson);
  return out;
}

std::vector<std::string> legacyDedupeKeysOf(const Record& record) {
  const ObjectIdentity& id = record.identity;
  if (!id.uid.empty() && !id.resourceVersion.empty()) return {legacyEventKey(id, record.type)};
  return {contentKey(id, "upsert", record.objectJson),
          contentKey(id, eventTypeName(record.type), record.objectJson)};
}

ObjectIdentity identityOf(const nlohmann::json& object) {
  ObjectIdentity id;
  const std::string apiVersion = stringMember(object, "apiVersion");
  const GroupVersion gv = splitApiVersion(apiVersion);
  id.group = gv.group;
  id.version = gv.version;
  id.kind = stringMember(object, "kind");
  const auto meta = object.find("metadata");
  if (meta != object.end()) {
    id.namespace_ = stringMember(*meta, "namespace");
    id.name = stringMember(*meta, "name");
    id.uid = stringMember(*meta, "uid");
    id.resourceVersion = stringMember(*meta, "resourceVersion");
  }
  // The OpenShift Kueue CR is cluster-scoped; a namespace in a stream is noise.
  if (id.group == "kueue.openshift.io" && id.kind == "Kueue") id.namespace_.clear();
  // A Kueue Configuration is a file, not a namespaced object (watch_event.h):
  // one per name, usually none, across the cluster.
  if (isKueueConfiguration(apiVersion, id.kind)) id.namespace_.clear();
  return id;
}

Ingester::Ingester(Ledger& ledger, IngestOptions options)
    : ledger_(ledger), options_(std::move(options)) {
  if (!options_.clock) options_.clock = nowNs;
  if (!options_.wallClock) options_.wallClock = nowNs;
  if (options_.batchRecords == 0) options_.batchRecords = 1;
}

bool Ingester::isDuplicate(const std::string& key) {
  if (pendingKeys_.count(key) != 0) return true;
  bool found = false;
  Status st = ledger_.hasEvent(key, &found);
  if (!st.isOk()) throw LedgerError(st);
  return found;
}

bool Ingester::isDuplicateEvent(const ObjectIdentity& id, EventType type) {
  if (isDuplicate(eventKey(id, type))) return true;
  // A ledger written by an earlier build holds keys without the kind: one
  // is this event only when the record it names has this group and kind.
  // On a ledger holding no such key (any this build created) the ledger
  // answers without a lookup (ledger.h, legacyEventKeys_); the Bloom
  // filter's answer still cost a second RocksDB lookup per event.
  std::uint64_t seq = 0;
  Status st = ledger_.eventSeq(legacyEventKey(id, type), &seq);
  if (st.isNotFound()) return false;
  if (!st.isOk()) throw LedgerError(st);
  Record recorded;
  st = ledger_.read(seq, &recorded);
  if (!st.isOk()) throw LedgerError(st);
  return recorded.identity.group == id.group && recorded.identity.kind == id.kind;
}

const LiveObject* Ingester::liveState(const std::string& objectKey) {
  if (auto it = pendingLive_.find(objectKey); it != pendingLive_.end()) {
    return it->second ? &*it->second : nullptr;
  }
  Status st = ledger_.liveObject(objectKey, &scratchLive_);
  if (st.isNotFound()) return nullptr;
  if (!st.isOk()) throw LedgerError(st);
  return &scratchLive_;
}

void Ingester::advance(const std::string& source, std::uint64_t position) {
  Cursor& c = cursors_[source];
  if (c.position != position) {
    c.position = position;
    cursorsDirty_ = true;
  }
}

PreparedEvent prepareEvent(WatchEvent event, const ProjectionOptions& options) {
  PreparedEvent out;
  out.type = event.type;
  out.timeNs = event.timeNs;
  if (event.type == WatchEventType::kBookmark) {
    if (auto meta = event.object.find("metadata"); meta != event.object.end())
      out.identity.resourceVersion = stringMember(*meta, "resourceVersion");
    return out;
  }
  if (event.type == WatchEventType::kError) {
    out.errorText =
        fmt::format("reason={} code={} message={}", stringMember(event.object, "reason"),
                    event.object.value("code", nlohmann::json(nullptr)).dump(),
                    stringMember(event.object, "message"));
    return out;
  }
  if (auto meta = event.object.find("metadata"); meta != event.object.end() && meta->is_object()) {
    meta->erase("managedFields");
  }
  out.identity = identityOf(event.object);
  out.objectJson = event.storedJson.empty() ? event.object.dump() : std::move(event.storedJson);
  // A projection made by the reader's fast path had no rejection (it leaves
  // a rejected object to this one).
  out.projection = event.projection.empty() ? projectObject(event.object, options, &out.rejection)
                                            : std::move(event.projection);
  return out;
}

void Ingester::record(const std::string& source, PreparedEvent event, std::uint64_t position) {
  advance(source, position);
  if (event.type == WatchEventType::kBookmark) {
    ++stats_.bookmarks;
    const std::string& rv = event.identity.resourceVersion;
    if (!rv.empty() && cursors_[source].resourceVersion != rv) {
      cursors_[source].resourceVersion = rv;
      cursorsDirty_ = true;
    }
    return;
  }
  if (event.type == WatchEventType::kError) {
    ++stats_.errorEvents;
    spdlog::warn("{}: ERROR event from the API server: {}", source, event.errorText);
    return;
  }
  if (!event.rejection.empty()) {
    ++stats_.rejected;
    spdlog::warn("{}{}: event rejected: {}", source, where(event.line, position), event.rejection);
    return;
  }
  ObjectIdentity& id = event.identity;
  const std::string objectKey = id.objectKey();
  std::string& json = event.objectJson;
  const bool keyed = !id.uid.empty() && !id.resourceVersion.empty();

  EventType type;
  std::string dedupeKey;
  std::optional<Digest> contentHash;
  if (!keyed && event.type != WatchEventType::kDeleted) {
    // A manifest: nothing but its content tells its versions apart, and the
    // contract records it when it differs from the object's latest recorded
    // version, as `kubectl apply` of A, then B, then A again changes the
    // object three times. The latest version's digest is in its live entry,
    // written in the same batch as the record, so this holds across runs.
    contentHash = Sha256::of(json);
    const LiveObject* live = liveState(objectKey);
    if (live != nullptr && live->contentHash == contentHash) {
      ++stats_.duplicates;
      return;
    }
    type = event.type != WatchEventType::kUpsert ? toEventType(event.type)
           : live != nullptr                     ? EventType::kModified
                                                 : EventType::kAdded;
  } else if (event.type == WatchEventType::kUpsert) {
    if (isDuplicateEvent(id, EventType::kAdded) || isDuplicateEvent(id, EventType::kModified)) {
      ++stats_.duplicates;
      return;
    }
    type = liveState(objectKey) != nullptr ? EventType::kModified : EventType::kAdded;
    dedupeKey = eventKey(id, type);
  } else if (keyed) {
    type = toEventType(event.type);
    dedupeKey = eventKey(id, type);
    if (isDuplicateEvent(id, type)) {
      ++stats_.duplicates;
      return;
    }
  } else {
    // The deletion of a manifest: a repeat of the latest version when the
    // object is already gone and this deletion was recorded before.
    type = EventType::kDeleted;
    dedupeKey = contentKey(id, eventTypeName(type), json);
    if (liveState(objectKey) == nullptr && isDuplicate(dedupeKey)) {
      ++stats_.duplicates;
      return;
    }
  }
  PendingRecord rec;
  rec.type = type;
  rec.timeNs = event.timeNs ? *event.timeNs : options_.clock();
  if (event.timeNs) {
    const std::int64_t now = options_.wallClock();
    // Subtracted in 128 bits: both ends may be anywhere in int64.
    __extension__ const __int128 ahead = static_cast<__int128>(*event.timeNs) - now;
    if (ahead > options_.farFutureNs) {
      ++stats_.farFuture;
      if (stats_.farFuture <= kFarFutureNamed) {
        spdlog::warn(
            "{}{}: {} {}: event time {} is more than {} s ahead of the clock ({}); later events "
            "stamped earlier will be raised to it",
            source, where(event.line, position), id.kind,
            id.namespace_.empty() ? id.name : id.namespace_ + "/" + id.name,
            formatRfc3339(*event.timeNs), options_.farFutureNs / 1000000000, formatRfc3339(now));
      } else if (stats_.farFuture == kFarFutureNamed + 1) {
        // A stream recorded ahead of this clock (a replayed or simulated
        // one) has millions: named, they buried the log and slowed ingest.
        spdlog::warn(
            "{}{}: further events more than {} s ahead of the clock are counted, not "
            "named",
            source, where(event.line, position), options_.farFutureNs / 1000000000);
      }
    }
  }
  rec.projection = std::move(event.projection);
  rec.objectJson = std::move(json);
  rec.contentHash = contentHash;
  if (!dedupeKey.empty()) pendingKeys_.insert(dedupeKey);
  rec.dedupeKey = std::move(dedupeKey);
  if (type == EventType::kDeleted) {
    pendingLive_[objectKey] = std::nullopt;
  } else {
    pendingLive_[objectKey] = LiveObject{id.uid, id.resourceVersion, contentHash};
  }
  if (!id.resourceVersion.empty()) cursors_[source].resourceVersion = id.resourceVersion;
  cursorsDirty_ = true;
  stats_.recordedByKind[id.kind]++;
  rec.identity = std::move(id);
  pending_.push_back(std::move(rec));
  if (pending_.size() >= options_.batchRecords) flush();
}

void Ingester::flush() {
  if (pending_.empty() && !cursorsDirty_) return;
  AppendResult result;
  const std::uint64_t headBefore = ledger_.lastSeq();
  Status st = ledger_.append(pending_, cursors_, &result);
  // An append can fail after its commit (the acknowledged-head file not
  // written): the head moved and the records are in the ledger. Kept
  // pending, a caller that retries would record them twice.
  if (!st.isOk() && (pending_.empty() || ledger_.lastSeq() == headBefore)) throw LedgerError(st);
  stats_.recorded += pending_.size();
  stats_.timesRaised += result.timesRaised;
  pending_.clear();
  pendingKeys_.clear();
  pendingLive_.clear();
  cursorsDirty_ = false;
  if (options_.onCommit) options_.onCommit(result);
  if (!st.isOk()) throw LedgerError(st);
}

}  // namespace ledger::ingest
