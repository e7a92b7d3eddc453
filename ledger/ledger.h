// The append-only quota ledger: a RocksDB database holding the log of watch
// events, its typed projection and the indexes (see format.h for the layout).
//
// Ownership: Ledger::open hands back the only owner of the database handle;
// destroying the Ledger closes it (a writable one first flushes its
// memtables, so the next open has no log to replay). Records read out are
// copies.
// Thread safety: reads (read, scan*, seqAtOrBefore, hasEvent, cursor,
// lastSeq, ...) may run concurrently with each other and with one appender;
// append() and the other writers must be called from one thread at a time,
// except putCheckpoint and putUsageRollups, which may also run on one other
// thread beside the appender: they write only their derived families, which
// no other writer touches, and no member the appender changes (RocksDB
// orders the two writes), and putCursor, which may run on any thread.
// lastHash() and lastTimeNs() are the appender's. One process may
// hold a ledger writable at a time (RocksDB's lock); others get kBusy.
// Never created over something else: a directory holding a database's files
// but no usable CURRENT or manifest is Corruption (with how to repair it), a
// non-empty directory without a ledger InvalidArgument; a new ledger is made
// only in an absent or empty directory. A ledger holding fewer records than
// a writer once acknowledged (format.h, ledger-head), or another record at
// that seq, is Corruption naming the seqs lost, in every mode.
// Errors: every operation returns a Status; nothing here throws except
// std::bad_alloc.
#pragma once

#include <atomic>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/record.h"
#include "ledger/sha256.h"
#include "ledger/status.h"
#include "schema/projection.capnp.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
struct DBOptions;
class WriteBatch;
class Snapshot;
}  // namespace rocksdb

namespace ledger {

class DeltaBases;     // ledger/internal/record_delta.h
class RecentRecords;  // ledger/internal/record_delta.h

// The bound on the write-ahead log, which all column families share and
// which RocksDB deletes only once every family with data in it has flushed.
// The small families (time index, dedupe keys, live view) fill their
// memtables slowly, and RocksDB's default bound (four times all families'
// write buffers, gigabytes here) let a bulk ingest keep gigabytes of log
// that the kernel then wrote back to disk, several times the bytes of the
// tables, in system time (docs/performance.md). A crash would also have
// replayed all of it. Past the bound,
// RocksDB flushes the families holding the oldest log file. Not part of the
// on-disk format.
inline constexpr std::uint64_t kMaxTotalWalBytes = 256ULL << 20;

// The bound for a long-running writer (`ledger-ingest --watch`). Readers that
// open the ledger beside it (ledger-query, ledger-replay) replay the whole log
// into memory on every run, at a cost proportional to its size, and a live
// writer fills the bulk bound above slowly, so readers would pay for a large
// log again and again. Past this smaller bound RocksDB flushes, so a reader's
// replay of the log stays short.
inline constexpr std::uint64_t kLiveMaxTotalWalBytes = 32ULL << 20;

// From this many bytes of records' JSON, an append writes its log records as
// one table file ingested into the `log` family, not through the write-ahead
// log (ledger/internal/log_table.h says why). Below it, as a live watcher's small
// commits are, a table file per commit would leave thousands of tiny files.
// The records and what a reader sees are the same either way. Not part of
// the on-disk format.
inline constexpr std::uint64_t kTableCommitBytes = 4ULL << 20;

// An event ready to be appended. `projection` is a Cap'n Proto flat message
// of schema::Projection (ingest/projector builds it); `dedupeKey`, when not
// empty, is remembered so the same event is never recorded twice.
// `contentHash`, when set, is kept in the object's `live` entry (unless the
// record is a deletion) for the writer to compare the next version with:
// objects without uid/resourceVersion have nothing else to tell versions
// apart (ingest/ingester.h).
struct PendingRecord {
  EventType type = EventType::kAdded;
  std::int64_t timeNs = 0;
  ObjectIdentity identity;
  std::string objectJson;
  std::string projection;
  std::string dedupeKey;
  std::optional<Digest> contentHash;
};

// Where a source (a file, stdin, a watched resource) stands: committed in the
// same atomic batch as the records it produced.
struct Cursor {
  std::string resourceVersion;
  std::uint64_t position = 0;  // bytes consumed of a file, or events seen
  bool operator==(const Cursor&) const = default;
};

struct AppendResult {
  std::uint64_t firstSeq = 0;  // 0 when the batch was empty
  std::uint64_t lastSeq = 0;
  std::uint64_t timesRaised = 0;  // events stamped earlier than their predecessor
};

// What `live` remembers of an object whose last event was not DELETED.
// Names one chunk of object copies: the checkpoint that wrote it and its
// number there (ledger/format.h, checkpoint_objects).
struct CheckpointChunkId {
  std::uint64_t checkpointSeq = 0;
  std::uint32_t chunk = 0;
  friend bool operator==(const CheckpointChunkId&, const CheckpointChunkId&) = default;
  friend auto operator<=>(const CheckpointChunkId&, const CheckpointChunkId&) = default;
};

struct LiveObject {
  std::string uid;
  std::string resourceVersion;
  // PendingRecord::contentHash of the object's last record, when it had one.
  std::optional<Digest> contentHash;
};

// Where the live ledger was cut (ledger/ledger_cut.cpp, format.h
// "archive-cut"): records 1..seq moved to the sealed archive in
// `archiveDir`; seq's chain hash and time are the link the live chain
// continues from. `firstTimeNs` is record 1's time, when the ledger began
// to observe (timeOf(1) answers it: reports state it as their coverage).
struct ArchiveCut {
  std::uint64_t seq = 0;
  Digest hash{};
  std::int64_t timeNs = 0;
  std::int64_t firstTimeNs = 0;
  std::string archiveDir;
};

class Ledger {
 public:
  struct Options {
    bool createIfMissing = true;
    bool readOnly = false;
    bool sync = true;  // fsync the WAL on every append (the durability promise)
    std::uint64_t maxWalBytes = kMaxTotalWalBytes;  // see kMaxTotalWalBytes
    // An append whose records' JSON reaches this many bytes writes its log
    // records as a table file (see kTableCommitBytes); UINT64_MAX: never.
    std::uint64_t tableCommitBytes = kTableCommitBytes;
  };

  [[nodiscard]] static Status open(const std::string& dir, const Options& options,
                                   std::unique_ptr<Ledger>* out);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  const std::string& directory() const { return dir_; }
  int formatVersion() const { return formatVersion_; }
  // The format of the projector that wrote the oldest projections
  // (format.h, kProjectionFormat); kProjectionFormatBeforeItWasRecorded for a
  // ledger whose projections an earlier build wrote.
  int projectionFormat() const { return projectionFormat_; }

  // Appends `batch` in order with the next sequence numbers and commits the
  // cursors with it, atomically. Event times are raised to the previous
  // record's time where they would go backwards (counted in the result).
  [[nodiscard]] Status append(const std::vector<PendingRecord>& batch,
                              const std::map<std::string, Cursor>& cursors, AppendResult* result);

  // The last committed record: from any thread (the head the appender
  // moves last, once its batch is committed).
  std::uint64_t lastSeq() const { return committedSeq_.load(std::memory_order_acquire); }
  const Digest& lastHash() const { return head_.hash; }
  std::int64_t lastTimeNs() const { return head_.timeNs; }

  // The cut, when `ledger-replay archive` moved the first records out
  // (set at open and by cutArchived, a copy: from any thread, since the
  // --watch daemon cuts on its upkeep thread while others read). Readers
  // asked for a record at or before it (but timeOf(1)), or a time before
  // its record's, get InvalidArgument naming the archive
  // (refusedBeforeCut); so does rebuildProjection.
  std::optional<ArchiveCut> archiveCut() const;
  // The first seq the ledger holds: 1, or the seq after the cut.
  std::uint64_t firstSeq() const { return cutSeq_.load(std::memory_order_acquire) + 1; }
  // The refusal for a reader that wants seq (or a time before the cut).
  [[nodiscard]] Status refusedBeforeCut(const std::string& what) const;
  // The cut (contract "Retention"): in ONE synced write batch, deletes
  // records 1..cut.seq (log, projection, time index), rewrites the object
  // index's record entries that list them, replaces every checkpoint by
  // the one at the cut (`checkpoint` with its `chunks`, which must copy
  // every object it names: no record before the cut stays to name), and
  // records the cut and format 6 in `meta`. Dedupe keys, the live view
  // and usage rollups stay. A cut ledger may be cut again later into the
  // same archive (after extendArchive). InvalidArgument when the ledger was
  // cut already at or after cut.seq or into another archive directory,
  // when cut.seq is 0 or not below the head, or when cut.hash is
  // not the stored hash at cut.seq. Writers only.
  [[nodiscard]] Status cutArchived(const ArchiveCut& cut, std::string_view checkpoint,
                                   const std::vector<std::string>& chunks);

  [[nodiscard]] Status read(std::uint64_t seq, Record* out) const;
  // Calls `fn` for each record in [from, to] (inclusive, to=0: to the end) with
  // the stored chain hash; stops early when fn returns false.
  [[nodiscard]] Status scanRecords(
      std::uint64_t from, std::uint64_t to,
      const std::function<bool(const Record&, const Digest& storedHash)>& fn) const;
  // The same over the projection, which a replay reads instead of the JSON.
  // The reader is valid only during the call.
  [[nodiscard]] Status scanProjections(
      std::uint64_t from, std::uint64_t to,
      const std::function<bool(std::uint64_t seq, schema::ProjectedRecord::Reader)>& fn) const;
  // The same as the words of each serialised schema::ProjectedRecord message
  // (aligned, valid only during the call), for a reader that keeps them: one
  // copy instead of decoding and rebuilding. A kj::Exception thrown by `fn`
  // (bytes that do not decode) becomes a corruption status naming the seq.
  [[nodiscard]] Status scanProjectionWords(
      std::uint64_t from, std::uint64_t to,
      const std::function<bool(std::uint64_t seq, kj::ArrayPtr<const capnp::word>)>& fn) const;
  // The same as each record's stored bytes: its chain hash and its LogRecord
  // bytes exactly as they were hashed (valid only during the call), for a
  // reader that ships records elsewhere (the fleet's publisher) without
  // decoding and encoding them again.
  [[nodiscard]] Status scanLogBytes(
      std::uint64_t from, std::uint64_t to,
      const std::function<bool(std::uint64_t seq, const Digest& storedHash,
                               std::string_view recordBytes)>& fn) const;
  // The projection of one record; the reader is valid only during the call.
  [[nodiscard]] Status readProjection(
      std::uint64_t seq, const std::function<void(schema::ProjectedRecord::Reader)>& fn) const;
  [[nodiscard]] Status readProjectionWords(
      std::uint64_t seq, const std::function<void(kj::ArrayPtr<const capnp::word>)>& fn) const;
  // Many records' projections, `seqs` ascending: one iterator seeks from one
  // to the next, so a table block is read and decompressed once for all the
  // records in it (separate Gets decompress it again for each). A seq that
  // is absent is NotFound; what does not decode is Corruption.
  [[nodiscard]] Status readProjectionsWords(
      const std::vector<std::uint64_t>& seqs,
      const std::function<void(std::uint64_t seq, kj::ArrayPtr<const capnp::word>)>& fn) const;
  // Raw bytes of a column family in key order (benchmarks: the raw-scan
  // baseline). A family this format has but the ledger lacks (a version-1
  // ledger opened read-only) is empty; an unknown one InvalidArgument.
  [[nodiscard]] Status scanRaw(
      const char* family,
      const std::function<void(std::string_view key, std::string_view value)>& fn) const;

  // The last seq whose time is <= timeNs; 0 when every record is later.
  [[nodiscard]] Status seqAtOrBefore(std::int64_t timeNs, std::uint64_t* seq) const;
  [[nodiscard]] Status timeOf(std::uint64_t seq, std::int64_t* timeNs) const;

  [[nodiscard]] Status hasEvent(std::string_view dedupeKey, bool* found) const;
  // The seq recorded under a dedupe key; kNotFound when there is none.
  [[nodiscard]] Status eventSeq(std::string_view dedupeKey, std::uint64_t* seq) const;
  [[nodiscard]] Status liveObject(std::string_view objectKey, LiveObject* out) const;  // kNotFound
  [[nodiscard]] Status scanLive(
      std::string_view prefix,
      const std::function<void(std::string_view objectKey, const LiveObject&)>& fn) const;
  [[nodiscard]] Status cursor(std::string_view source, Cursor* out) const;  // kNotFound
  // Writes one cursor outside an append (not synced: a cursor lost in a
  // crash only repeats work its owner can repeat, such as records published
  // again). May run on any thread, beside the appender and the other
  // writers, for a source that no append names (the publisher's mark,
  // ingest/fleet/publisher.h): it writes only that key and reads no member
  // a writer changes.
  [[nodiscard]] Status putCursor(std::string_view source, const Cursor& cursor);
  // Whether object_index covers every record (format.h): false on a ledger
  // of an earlier format, until `ledger-replay rebuild-projection`.
  [[nodiscard]] Status objectIndexComplete(bool* complete) const;
  // The object_index entries whose keys start with `prefix`, in key order
  // (format.h forms the prefixes; ledger/object_index.h reads the values).
  // Empty on a ledger without the family.
  [[nodiscard]] Status scanObjectIndex(
      std::string_view prefix,
      const std::function<void(std::string_view key, std::string_view value)>& fn) const;
  // The first object_index key at or after `from` (empty when there is
  // none), so a reader can jump from one kind to the next (the kinds a
  // ledger holds) instead of reading every record's key.
  [[nodiscard]] Status seekObjectIndex(std::string_view from, std::string* key) const;

  // Derived data: checkpoints of the folded state (replay/fold/checkpoints.h),
  // stored with the chunks of object copies they introduce (chunk i under
  // CheckpointChunkId{seq, i}) in one atomic write.
  [[nodiscard]] Status putCheckpoint(std::uint64_t seq, std::string_view bytes,
                                     const std::vector<std::string>& chunks = {});
  // Reads the chunks `ids` (ascending) with fn(index into ids, words); the
  // words are valid during the call. A missing chunk is NotFound (also on a
  // format-1 ledger opened read-only), a malformed one Corruption.
  [[nodiscard]] Status readCheckpointChunks(
      const std::vector<CheckpointChunkId>& ids,
      const std::function<void(std::size_t, kj::ArrayPtr<const capnp::word>)>& fn) const;
  // The newest checkpoint at or before `seq`: *foundSeq = 0 when there is none.
  [[nodiscard]] Status checkpointAtOrBefore(std::uint64_t seq, std::uint64_t* foundSeq,
                                            std::string* bytes) const;
  [[nodiscard]] Status scanCheckpoints(
      const std::function<bool(std::uint64_t seq, std::string_view bytes)>& fn) const;
  [[nodiscard]] Status dropCheckpoints();

  // Derived data: usage rollups (replay/kueue/usage_rollups.h), one value per
  // bucket under format::usageRollupKey. put writes all `buckets` (key ->
  // payload) in one atomic write, each with its checksum (format.h). scan
  // calls fn(key, payload) for the keys in [from, to) in key order until fn
  // returns false; a payload failing its checksum or not a whole number of
  // words is Corruption naming the key. On a ledger without the family
  // (format 3 or less, read-only) scan finds nothing and put is
  // InvalidArgument. Drop deletes them all.
  [[nodiscard]] Status putUsageRollups(const std::map<std::string, std::string>& buckets);
  [[nodiscard]] Status scanUsageRollups(
      std::string_view from, std::string_view to,
      const std::function<bool(std::string_view key, kj::ArrayPtr<const capnp::word> payload)>& fn)
      const;
  // The greatest key starting with `grain` (empty when there is none).
  [[nodiscard]] Status lastUsageRollup(char grain, std::string* key) const;
  // The greatest key at or before `bound` with the same first byte (empty
  // when there is none).
  [[nodiscard]] Status usageRollupAtOrBefore(std::string_view bound, std::string* key) const;
  [[nodiscard]] Status dropUsageRollups();
  // After a write failed for a full disk, RocksDB refuses every write until
  // the error is cleared (its background error). This clears it once space
  // is back (DB::Resume: flushes what memory holds, starts a new
  // write-ahead log); OK at once when there is no such error. Fails, the
  // error kept, while the disk is still full. Writers only.
  [[nodiscard]] Status resume();
  // Rewrites every table file of the named column family (all families when
  // empty) with this build's storage options: block size and compression
  // (e.g. LZ4 for the projection family, which earlier builds compressed
  // with zstd at the bottom level). Content is unchanged. Takes minutes on
  // a large ledger; writers only. InvalidArgument for an unknown family.
  [[nodiscard]] Status compact(const std::string& familyName = {});

  // Rewrites the projection of every record from its raw JSON, then records
  // format::kProjectionFormat as the ledger's projection format: `project`
  // must be this build's projector.
  [[nodiscard]] Status rebuildProjection(const std::function<std::string(const Record&)>& project,
                                         std::uint64_t* rewritten);

  // Test and repair hook: overwrite the stored bytes of one family's key.
  [[nodiscard]] Status putRawForTesting(const char* family, std::string_view key,
                                        std::string_view value);
  // Test hook: delete one family's key (a ledger as an earlier build left it).
  [[nodiscard]] Status deleteRawForTesting(const char* family, std::string_view key);
  [[nodiscard]] Status getRaw(const char* family, std::string_view key, std::string* value) const;

  // Bytes the ledger occupies on disk: table files per family, "wal" for the
  // write-ahead log, and "total" for all of them.
  std::map<std::string, std::uint64_t> diskUsage() const;

 private:
  struct Head {
    std::uint64_t seq = 0;
    Digest hash{};
    std::int64_t timeNs = 0;
  };
  struct Families;

  Ledger() = default;
  rocksdb::ColumnFamilyHandle* family(const char* name) const;
  [[nodiscard]] Status dropUncommittedLog();
  // Rewrites the acknowledged head file (format.h) with head_, synced.
  [[nodiscard]] Status writeAcknowledgedHead();
  // The steps of open (ledger_open.cpp), in the order open runs them.
  // Opens db_ with every family this build knows, or a reader with those an
  // older ledger has.
  [[nodiscard]] Status openFamilies(const rocksdb::DBOptions& dbo);
  // Sets legacyEventKeys_ from one seek in `events` (a writer only).
  [[nodiscard]] Status findLegacyEventKeys();
  // Reads the format version; initialises a new store or upgrades an older
  // one for a writer. `acknowledgedSeq` is the acknowledged head's seq, 0:
  // none.
  [[nodiscard]] Status loadFormatVersion(std::uint64_t acknowledgedSeq);
  // Initialises a store without a format version, unless it lost records.
  [[nodiscard]] Status initialiseFormat(std::uint64_t acknowledgedSeq);
  // Checks a stored format version and upgrades it for a writer.
  [[nodiscard]] Status checkFormatVersion(const std::string& value);
  // Records this build's format version in `meta`, synced.
  [[nodiscard]] Status writeCurrentFormat(const char* what);
  // Reads head_ from `meta` (none: the empty head).
  [[nodiscard]] Status loadHead();
  // Reads projectionFormat_ from `meta`; a writer records it in a ledger
  // without records.
  [[nodiscard]] Status loadProjectionFormat();
  // Opens headFd_ and names head_ in it when `acknowledgedSeq` (the file's
  // seq, nullopt: no file) is behind (a writer only).
  [[nodiscard]] Status startAcknowledgedHead(std::optional<std::uint64_t> acknowledgedSeq);
  // append()'s batch, cleared, with room for `batch`'s writes (its log
  // records too unless they go `viaTable`, a table file of their own).
  rocksdb::WriteBatch& appendBatchFor(const std::vector<PendingRecord>& batch, bool viaTable);
  // Records format::kProjectionFormat in `meta`, in `batch` when given
  // (committed by the caller), else on its own, synced.
  [[nodiscard]] Status writeProjectionFormat(rocksdb::WriteBatch* batch);
  // Adds a checkpoint and its chunks to `wb` (putCheckpoint, the cut).
  void addCheckpoint(rocksdb::WriteBatch& wb, std::uint64_t seq, std::string_view bytes,
                     const std::vector<std::string>& chunks) const;
  // The LogRecord bytes of record `seq` whose stored body (after the chain
  // hash) is `body`: `body` itself when it is a full record, else the delta
  // resolved against its bases (format.h, kDeltaMarker) into `full`, bases
  // read under `snapshot` unless `recent` (a scan's) holds them. `out` views
  // `body` or `full`. Corruption naming the seq when a base is missing or a
  // delta does not decode.
  [[nodiscard]] Status resolveLogBody(std::uint64_t seq, std::string_view body,
                                      const rocksdb::Snapshot* snapshot, RecentRecords* recent,
                                      std::string* full, std::string_view* out) const;
  // Rewrites, in `wb`, the records after `cutSeq` stored as deltas against
  // a record at or before it as full records (ledger_deltas.cpp).
  [[nodiscard]] Status rewriteDeltasAcrossCut(rocksdb::WriteBatch& wb, std::uint64_t cutSeq) const;
  // Reads the cut marker from `meta` into cut_ (open).
  [[nodiscard]] Status loadArchiveCut();
  // Deletes or rewrites, in `wb`, the object index's record entries that
  // list seqs at or before `seq` (the cut).
  [[nodiscard]] Status cutObjectIndex(rocksdb::WriteBatch& wb, std::uint64_t seq) const;

  std::string dir_;
  Options options_;
  int formatVersion_ = 0;
  int projectionFormat_ = 1;  // format::kProjectionFormatBeforeItWasRecorded
  // The cut: cut_ under cutMu_ (cutArchived moves it on while readers of
  // other threads look), its seq also in cutSeq_ (0: none) for firstSeq.
  mutable std::mutex cutMu_;
  std::optional<ArchiveCut> cut_;
  std::atomic<std::uint64_t> cutSeq_{0};
  Head head_;
  // head_.seq for readers on other threads than the appender: records past
  // it are not committed (format.h).
  std::atomic<std::uint64_t> committedSeq_{0};
  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<Families> families_;
  int headFd_ = -1;  // the acknowledged head file, open while writable
  // append()'s batch, kept between calls with its memory (appends are
  // serialised, see above), and the bytes it was sized for.
  std::unique_ptr<rocksdb::WriteBatch> appendBatch_;
  std::size_t appendBatchBytes_ = 0;
  // Whether `events` may hold keys of earlier builds (format.h,
  // kLegacyEventKeyPrefix): found at open, set by a write of one. Without
  // them, a lookup of such a key is answered without RocksDB: the ingester
  // looks one up for every watch event, a second lookup per event that
  // always missed on a ledger this build created.
  std::atomic<bool> legacyEventKeys_{true};
  // Log records are stored as deltas against their object's previous
  // record (format.h, kDeltaMarker): the appender's bases, made by the
  // first append. appendMu_ is held by append(); cutArchived takes it to
  // raise deltaFloor_ (no delta on a base at or before it) between two
  // appends.
  std::unique_ptr<DeltaBases> deltaBases_;
  std::mutex appendMu_;
  std::atomic<std::uint64_t> deltaFloor_{0};
};

// Builds ProjectedRecord bytes from a record header and Projection bytes.
std::string buildProjectedRecord(const Record& header, std::string_view projectionBytes);

}  // namespace ledger
