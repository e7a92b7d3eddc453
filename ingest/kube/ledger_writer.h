// The daemon's one ledger writer: a queue that the watches fill, drained by a
// thread that records events through the Ingester with group commit (a batch
// is committed at `batchRecords` records or `flushInterval` after its first
// event, whichever comes first), and that turns a LIST into ledger truth:
// objects that changed are recorded as ADDED/MODIFIED, objects the ledger
// holds live but the LIST no longer has are recorded as DELETED (and an
// object recreated under the same name as DELETED then ADDED).
//
// Cursors: events of a watch move the cursor "watch:<resource id>"; items of
// a LIST are recorded under "relist:<resource id>" and the watch cursor moves
// to the list's resourceVersion only in the commit that ends the LIST. So a
// crash in the middle of a LIST resumes from the old cursor (and lists again
// if that is too old); a crash never leaves the watch cursor past an event
// that is not in the ledger.
//
// Snapshots (snapshot_tracker.h): the LISTs of one start or relist form one
// snapshot, bracketed in the log by a Snapshot object; the Workloads' LIST
// and events wait until every other resource of the snapshot has listed, so
// that no fold sees a Workload before the configuration, DeviceClasses,
// slices, templates and claims it is charged by. A resource the ledger
// watched before that must list again records a gap: from its "current:"
// cursor (the last moment it was known current) to the relist; the objects
// that relist records carry that moment (schema/observation.h).
//
// Event times: the ingest clock when the writer records an event, except for
// late events (late_events.h): a watch event whose object gives an earlier
// time for its change is stamped with that time and keeps its receipt in an
// annotation. Never earlier than the record before.
//
// A synthesized DELETED carries what the ledger knows (apiVersion, kind,
// name, namespace, uid), resourceVersion = the LIST's (so its dedupe key is
// its own), and the annotation kKubeLedgerSynthesized.
//
// A full disk (ENOSPC, RocksDB's NoSpace) stops nothing: the commit's
// records stay pending in the Ingester, unchanged and in order, and the
// commit is tried again after `retryInitial`, the wait doubling up to
// `retryMax`, each attempt first clearing RocksDB's error (Ledger::resume).
// Meanwhile readiness is withheld (Metrics::setWritesBlocked) and nothing
// else is recorded, so the queue fills and push() makes the watches wait:
// memory stays bounded by the queue, the batch taken from it and one
// commit's records. Cursors move only with the records they cover, so
// nothing is acknowledged past what is committed. One log line when commits
// start failing and one when they succeed again; every failed attempt is
// counted (Metrics::writeFailed).
//
// Ownership: borrows the Ledger and Metrics, which must outlive the writer.
// Thread safety: push() from any thread; start()/requestStop()/close() from
// the owner.
// Errors: a failed ledger write stops the writer: failed() turns true,
// failure() says why, push() refuses further messages. So does a full disk
// once a stop is requested or close() is called (failure() then counts the
// received events that were not committed). Nothing throws out of the
// thread. start() may throw std::system_error.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>

#include "ingest/ingester.h"
#include "ingest/kube/late_events.h"
#include "ingest/kube/metrics.h"
#include "ingest/kube/snapshot_tracker.h"
#include "ingest/kube/watch_message.h"
#include "ingest/watch_event.h"
#include "ledger/ledger.h"

namespace ledger::kube {

struct WriterOptions {
  std::size_t batchRecords = 1000;
  std::chrono::milliseconds flushInterval{200};
  std::size_t queueCapacity = 4096;      // messages; producers wait when it is full
  ingest::ProjectionOptions projection;  // --kueue-config
  // The wait before a commit refused for a full disk is tried again; it
  // doubles with each failure, up to retryMax.
  std::chrono::milliseconds retryInitial{1000};
  std::chrono::milliseconds retryMax{30000};
  // Called on the writer thread after each commit that appended records,
  // with the committed range [firstSeq, lastSeq], once the records are
  // readable from the ledger. Lets a higher layer keep derived state live
  // (tools/live_state.h folds them) without this layer knowing replay. It
  // delays the next commit while it runs; it must not throw (an exception
  // is logged and the writer goes on).
  std::function<void(std::uint64_t firstSeq, std::uint64_t lastSeq)> afterCommit;
  // The resources the first snapshot waits for (ResourceSpec::id()): each
  // lists, resumes its watch or turns out absent.
  std::set<std::string> watched;
  // How long a snapshot waits for LISTs that do not begin or end.
  std::chrono::milliseconds snapshotWait{120000};
  // How long late events are held to be put in time order.
  std::chrono::milliseconds lateHold{1000};
};

class LedgerWriter {
 public:
  LedgerWriter(Ledger& ledger, Metrics& metrics, WriterOptions options);
  ~LedgerWriter();
  LedgerWriter(const LedgerWriter&) = delete;
  LedgerWriter& operator=(const LedgerWriter&) = delete;

  void start();
  // Queues a message; waits while the queue is full. False (message dropped)
  // once the writer is closing or failed, or waits for disk space after a
  // stop was requested.
  bool push(WatchMessage message);
  // From now on a commit refused for a full disk is not retried: the writer
  // fails, releasing producers that wait for room. Called before the
  // producers are stopped, so that a stop does not wait for disk space.
  void requestStop();
  // Records everything queued, commits, joins the thread. Idempotent.
  void close();

  bool failed() const;
  Status failure() const;
  const ingest::IngestStats& stats() const { return ingester_.stats(); }

 private:
  void run();
  // The time the writer thread should wake at, if any.
  std::optional<std::chrono::steady_clock::time_point> wakeAt() const;
  // Holds a message (a deferred Workload, a late event) or records it.
  void handle(WatchMessage& m);
  void dispatch(WatchMessage& m);
  // Deadlines passed: held late events recorded, deferred messages released,
  // the snapshot closed when it can be (`force`: at a stop, with what it has).
  void tick(bool force);
  void drainLate();
  void listBegin(const WatchMessage& m);
  void listItem(WatchMessage& m);
  void listEnd(const WatchMessage& m);
  void markCurrent(const ResolvedResource& r, std::int64_t ns);
  void add(const std::string& source, ingest::WatchEvent event, std::int64_t receivedNs);
  void flush();
  // The Ingester's pending records and cursors committed, retried while the
  // disk is full; throws GaveUp once told to stop meanwhile.
  void commit();
  // False when told to stop before `delay` passed.
  bool waitBeforeRetry(std::chrono::milliseconds delay);
  void setBlocked(bool blocked);
  void onCommit(const AppendResult& result);
  void updateStoredBytes(bool force);

  Ledger& ledger_;
  Metrics& metrics_;
  WriterOptions options_;
  ingest::Ingester ingester_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<WatchMessage> queue_;
  bool closing_ = false;
  bool stopRequested_ = false;
  bool blocked_ = false;  // a commit waits for disk space
  bool failed_ = false;
  Status failure_;
  std::thread thread_;

  // Writer thread only.
  SnapshotTracker snapshot_;
  LateEvents late_;
  std::int64_t lastStampedNs_ = 0;
  std::set<std::string> live_;  // watches known current (their "current:" cursors)
  std::map<std::string, std::shared_ptr<const ResolvedResource>> resources_;
  std::optional<std::chrono::steady_clock::time_point> dirtySince_;
  std::map<std::string, std::uint64_t> positions_;
  std::map<std::string, std::uint64_t> committedByKind_;
  std::chrono::steady_clock::time_point lastSizeCheck_;
};

// The DELETED event for a live object the API no longer has.
ingest::WatchEvent synthesizedDeletion(const ResolvedResource& resource,
                                       const std::string& objectKey, const LiveObject& live,
                                       const std::string& resourceVersion, const char* why);

}  // namespace ledger::kube
