// Records watch events in the ledger: identity, idempotency, time stamping,
// managedFields removal, projection, and group commit with the source cursor.
//
// Idempotency (docs/reference.md): an event with the same object group, kind, uid,
// resourceVersion and type as a recorded one is skipped; an upsert (bare
// object or list item) is skipped when that group, kind, uid and
// resourceVersion were recorded as ADDED or MODIFIED. An object without uid
// or resourceVersion (a manifest) is recorded when its stored JSON differs
// from the object's latest recorded version, and only then: A, B, A records
// three versions, A, A one, across runs too (the latest version's SHA-256 is
// kept in the ledger's live view with the record,
// PendingRecord::contentHash). Its deletion is skipped only when the object
// is already gone and the same deletion was recorded. BOOKMARK and ERROR
// events record nothing (a bookmark moves the source cursor).
//
// Recording is split in two: prepareEvent() does the per-event work that needs
// no ledger (dropping managedFields, identity, stored JSON, projection) and
// may run on any thread; Ingester::record() does what depends on the ledger
// and on the events before it (idempotency, ADDED vs MODIFIED, group commit).
// stream_ingest.h runs the two on separate threads. (Projecting on the
// writer's side instead, to balance the threads, was slower: the reader's
// nlohmann values were then freed on the writer thread, and malloc's share
// of the reader's time more than doubled.)
//
// Ownership: borrows the Ledger, which must outlive the Ingester.
// Thread safety: none; one Ingester per writer thread. prepareEvent is pure.
// Errors: throws LedgerError when the ledger refuses a write; events already
// handed to add() but not yet flushed are then not recorded (the cursor
// committed with the last good batch says where to resume). They stay
// pending, unchanged: flush() again commits them once the ledger takes
// writes again (the watch daemon, after a full disk), and a commit that
// failed only after it was made is not repeated.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingest/projector.h"
#include "ingest/watch_event.h"
#include "ledger/ledger.h"

namespace ledger::ingest {

class LedgerError : public std::runtime_error {
 public:
  explicit LedgerError(const Status& status)
      : std::runtime_error(status.toString()), status_(status) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// Far-future events named one by one in warnings; the rest are counted.
inline constexpr std::uint64_t kFarFutureNamed = 10;

struct IngestStats {
  std::uint64_t recorded = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t bookmarks = 0;
  std::uint64_t errorEvents = 0;
  std::uint64_t timesRaised = 0;
  // Events whose time is more than IngestOptions::farFutureNs ahead of the
  // wall clock, the first kFarFutureNamed also named in a warning: one bad
  // clock would otherwise drag every later event up to its time with only
  // the count above.
  std::uint64_t farFuture = 0;
  std::uint64_t rejected = 0;  // events record() skipped for their rejection
  std::map<std::string, std::uint64_t> recordedByKind;
};

struct IngestOptions {
  std::size_t batchRecords = 1000;  // flush when this many records are pending
  // Stamps events that carry no "time"; ns since the epoch.
  std::function<std::int64_t()> clock;
  // Called after each committed batch (metrics, logs).
  std::function<void(const AppendResult&)> onCommit;
  // How add() projects objects (projector.h).
  ProjectionOptions projection;
  // Last, so that positional initialisers of the fields above still work.
  // The wall clock the far-future check compares event times with (default:
  // the system clock); ns since the epoch.
  std::function<std::int64_t()> wallClock = nullptr;
  std::int64_t farFutureNs = 24LL * 3600 * 1000000000;  // a day
};

// One watch event made ready to record.
struct PreparedEvent {
  WatchEventType type = WatchEventType::kUpsert;
  std::optional<std::int64_t> timeNs;
  ObjectIdentity identity;  // a BOOKMARK carries only its resourceVersion
  std::string objectJson;   // the object without managedFields, as stored
  std::string projection;   // projectObject() of that object
  std::string errorText;    // an ERROR event's reason, code and message
  // Why the event must not be recorded (a time outside the ledger's range in
  // the object, projectObject), or empty. record() skips such an event.
  std::string rejection;
  std::uint64_t line = 0;  // where the event starts in its source, when known (messages)
};

// Pure; thread-safe. Never throws for odd objects (see projector.h).
PreparedEvent prepareEvent(WatchEvent event, const ProjectionOptions& options = {});

class Ingester {
 public:
  Ingester(Ledger& ledger, IngestOptions options);

  // Records `event` read from `source`; `position` is where the source stands
  // after it (bytes read). May commit a batch.
  void add(const std::string& source, WatchEvent event, std::uint64_t position) {
    record(source, prepareEvent(std::move(event), options_.projection), position);
  }
  // The same for an event prepared earlier (possibly on another thread).
  void record(const std::string& source, PreparedEvent event, std::uint64_t position);
  // Moves a source's cursor without an event (e.g. end of a file).
  void advance(const std::string& source, std::uint64_t position);
  // Commits pending records and cursors.
  void flush();

  std::size_t pending() const { return pending_.size(); }
  const IngestStats& stats() const { return stats_; }

 private:
  bool isDuplicate(const std::string& key);
  // A keyed watch event already recorded, under this build's key or an
  // earlier build's (ledger/format.h, "events").
  bool isDuplicateEvent(const ObjectIdentity& id, EventType type);
  const LiveObject* liveState(const std::string& objectKey);

  Ledger& ledger_;
  IngestOptions options_;
  IngestStats stats_;
  std::vector<PendingRecord> pending_;
  std::set<std::string> pendingKeys_;
  // Objects touched by the pending batch: the live view the ledger will have.
  std::map<std::string, std::optional<LiveObject>> pendingLive_;
  LiveObject scratchLive_;
  std::map<std::string, Cursor> cursors_;
  bool cursorsDirty_ = false;
};

// The identity of a (valid) object: group/version from apiVersion, kind,
// namespace (none for the cluster-scoped Kueue CR and for a Kueue
// Configuration), name (empty for a Configuration without one), uid,
// resourceVersion.
ObjectIdentity identityOf(const nlohmann::json& object);

// The dedupe key Ingester::record stored in the ledger's `events` family
// for `record` ("" when it stored none: a version of an object without uid
// or resourceVersion, which its live entry's digest dedupes instead), for
// verifyLog to check that family against the log (VerifyOptions::dedupeKey).
std::string dedupeKeyOf(const Record& record);

// The keys earlier builds stored for `record` (ledger/format.h, events):
// "e\0" uid "\0" resourceVersion "\0" type for an object with both, and for
// one without, its content key under "upsert" or the event's type (which of
// the two depended on the input's form, which the record does not keep).
// The Ingester still honours the first kind; each is derived from the log
// like today's key, so verifyLog accepts one that names its record
// (VerifyOptions::legacyDedupeKeys).
std::vector<std::string> legacyDedupeKeysOf(const Record& record);

// A committed record made ready to be recorded again, with what this
// build's ingest derives for it: its projection, its dedupe key and, for a
// version of an object without uid or resourceVersion, its live digest. A
// copy of a ledger (the fleet's, ingest/fleet/fleet_consumer.h) appends it
// at the same seq, so the copy's log and chain are the source's and its
// derived families are what `verify` derives.
PendingRecord pendingRecordOf(Record record, const ProjectionOptions& options);

}  // namespace ledger::ingest
