// The ledger's on-disk format, in one place.
//
// A ledger is one RocksDB database with these column families:
//   log          seq (8 bytes big-endian) -> chain hash (32 bytes) ++ LogRecord
//                (Cap'n Proto flat message, schema/log.capnp). Source of truth.
//                Since format 8 the LogRecord may be stored as a delta:
//                kDeltaMarker (4 bytes 0xff, a segment count no flat message
//                has) ++ the base's seq (8 bytes BE) ++ a magicless zstd
//                frame of the LogRecord bytes compressed with the base's
//                LogRecord bytes as its prefix (ledger/internal/record_delta.h).
//                The base is the same object's previous record, or for an
//                object's first record its kind's last; at most kDeltaWindow
//                seqs before, at most kDeltaMaxDepth deltas from a record
//                stored whole, never at or before the cut. The chain hash is
//                over the LogRecord bytes the delta stands for.
//   projection   seq -> ProjectedRecord (schema/projection.capnp). Derived;
//                rebuilt from `log` by `ledger-replay rebuild-projection`.
//   time_index   event time ns (8 bytes BE, offset so negative times sort) ++ seq
//                -> empty. "Last record at or before T" is one SeekForPrev.
//   events       dedupe key -> seq. One key per recorded event, for idempotent
//                ingest (ingest/ingester.cpp forms them). A watch event's key
//                is "k\0" group "\0" kind "\0" uid "\0" resourceVersion "\0"
//                type; earlier builds wrote "e\0" uid "\0" resourceVersion
//                "\0" type, without the kind, so one kind's event hid
//                another's with the same uid and resourceVersion. Those keys
//                stay valid: the ingester, finding one, compares the group and
//                kind of the record it names. Manifests' keys start "c\0".
//   live         object key (group/kind/namespace/name) -> uid '\0' resourceVersion
//                ['\0' SHA-256 of the stored object JSON (32 bytes)] of objects
//                whose last event was not DELETED. The digest is there when the
//                last record carried one (PendingRecord::contentHash: objects
//                without uid/resourceVersion); a value without it, as earlier
//                builds wrote every value, has none. Earlier builds read such a
//                value's resourceVersion with the digest appended.
//   checkpoints  seq -> serialised folded state (derived, may be dropped).
//   checkpoint_objects  checkpoint seq ++ chunk number (4 bytes BE) ->
//                XXH3-64 of the rest (8 bytes BE) ++ a
//                schema::CheckpointChunk: copies of the projections of
//                long-lived objects a checkpoint names, written once by the
//                first checkpoint that finds them older than its interval and
//                named by later ones, so a query reads them densely instead
//                of one scattered block each (derived with the checkpoints,
//                dropped with them). Since format 2.
//   object_index which records touch an object, and which objects refer to a
//                uid (derived, written in the batch that appends the records):
//                  'r' object key '\0' seq (8 bytes BE) -> the object's
//                    later records in the same batch: each seq after the
//                    key's as its difference from the one before (at least
//                    1), an unsigned LEB128 varint. One entry per object per
//                    batch, so the entries of one object list its records in
//                    seq order and every record is listed exactly once. An
//                    empty value is a record of its own, as format 3 and 4
//                    wrote every record.
//                  'o' namespace '\0' uid '\0' object key -> empty, for every
//                    uid a record's projection names in ownerReferences (and,
//                    of a ResourceClaim, in status.reservedFor): the objects
//                    that ever referred to that uid (a Job's or Workload's
//                    Pods, a Pod's ResourceClaims).
//                `ledger-query workload` reads these entries and the records
//                they name instead of scanning the log. Since format 3.
//   usage_rollups grain ('h' hour, 'd' day, 'm' calendar month, UTC) ++
//                bucket start (8 bytes BE, offset as in time_index) ->
//                XXH3-64 of the rest (8 bytes BE) ++ a schema::UsageBucket
//                (schema/rollup.capnp): the exact integrals of reserved,
//                admitted and nominal quota over the bucket
//                (replay/kueue/usage_rollups.h). Derived: written with the
//                checkpoints, dropped with a rebuild, checked by verify.
//                Since format 4. Beside them since format 6, the held levels
//                (replay/kueue/held_record.h): kind ('x' changes, 'y' every
//                holder, 'z' a covered run's end) ++ seq (8 bytes BE) -> a
//                schema::HeldLevels. Derived the same way. Since format 7,
//                the stored wait data (replay/kueue/wait_rollups.h): 'w' ++
//                hour start (8 bytes BE, offset as in time_index) -> a
//                schema::WaitHour (schema/waits.capnp), the hour's
//                admissions and their waits; 'v' ++ seq (8 bytes BE) -> a
//                schema::WaitState, the wait follower after that record.
//                Derived the same way.
//   meta         "format" -> decimal format version; "head" -> last seq, hash,
//                time; "cursor/<source>" -> per-source ingest cursor;
//                "object_index" -> "complete" when object_index covers every
//                record (written when the ledger is created and by
//                `ledger-replay rebuild-projection`).
//                "projection-format" -> decimal kProjectionFormat of the
//                projector that wrote the oldest projections (below).
//                "archive-cut" -> the cut (ledger/ledger.h, cutArchived):
//                the last archived seq (8 bytes BE), its chain hash (32), its
//                time (8 bytes BE), record 1's time (8 bytes BE), then the
//                archive's directory; records
//                up to that seq are in the archive, not here. Since format 6.
//
// Chain: hash(seq) = SHA-256(hash(seq-1) ++ LogRecord bytes), hash(0) = 32 zero
// bytes. Sequence numbers start at 1 and are dense.
//
// Commit point: the head in `meta`. Records in `log` past the head's seq are
// not part of the ledger: a large commit ingests its log records as a table
// file before the batch that moves the head (ledger/internal/log_table.h), and a crash
// between the two leaves them. Readers stop at the head; a writable open
// deletes them (and the `staging` directory beside the database files, where
// such tables are built). Every build that wrote format 2 kept the log
// within the head, so this is a rule for readers, not a new version.
//
// Beside the database files, `ledger-head` (kAcknowledgedHeadFile): the head
// a writer last acknowledged, 64 bytes: "LEDGHEAD", seq (8 bytes BE), chain
// hash (32), time (8 bytes BE), XXH3-64 of the 56 bytes before (8 bytes BE).
// A writer with sync on rewrites it after each commit's write-ahead log sync
// (so it never names a commit that is not durable); with sync off, at a clean
// close after the flush. An open that finds fewer records than it names, or
// another record at its seq, refuses the ledger: what was acknowledged is
// gone (a damaged or lost write-ahead log) and the next commit would reuse
// the seqs. Absent (ledgers of earlier builds) or empty (an open killed
// between creating it and its first write) it names nothing, and is written
// at the next writable open; not a format change.
//
// Also beside them, `ledger-verified` (kVerificationFile): the newest
// verification's statement (ledger/verification_record.h), derived, not part
// of the format.
//
// Versions: a ledger records the format it was written with; this build reads
// kOldestFormat..kCurrentFormat and refuses anything else with a clear error.
//   1  the families above but checkpoint_objects.
//   2  adds checkpoint_objects. A version-1 ledger opened for writing is
//      upgraded in place (the family is created empty; its checkpoints keep
//      naming records only); opened read-only it is read as it is.
//   3  adds object_index. An older ledger opened for writing is upgraded in
//      place: the family is created empty and indexes the records appended
//      from then on, without the "object_index" meta key, so queries scan the
//      log until `ledger-replay rebuild-projection` indexes every record.
//   4  adds usage_rollups. An older ledger opened for writing gets the family
//      empty; the next `ledger-replay checkpoint` (or ingest) fills it.
//   5  object_index record entries list the object's later records of the
//      batch in their value (above); 3 and 4 wrote one empty entry per
//      record, which reads the same. An older ledger opened for writing is
//      upgraded in place: its entries stay as they are. A build that reads
//      at most 4 would take a listing entry for one record, hence the
//      version.
//   6  usage_rollups also holds the held levels ('x', 'y', 'z' keys), and
//      the cut ("archive-cut" above): a ledger may start after seq 1. An
//      older ledger opened for writing is upgraded in place; the next rollup
//      pass writes the held levels. A build that reads at most 5 would take
//      them for malformed rollups (its verify fails, and answers after it are
//      refused), and a cut ledger for a whole one (answering moments before
//      the cut from nothing), hence the version.
//   7  usage_rollups also holds the stored wait data ('w', 'v' keys). An
//      older ledger opened for writing is upgraded in place; the next rollup
//      pass (ingest, `ledger-replay checkpoint`, the daemon's upkeep) writes
//      it from the log, and until then `waits` reads the log. A build that
//      reads at most 6 would take the keys for malformed rollups (its
//      verify fails), hence the version.
//   8  log records may be deltas (above). An older ledger opened for writing
//      is upgraded in place: its records stay whole, and the records
//      appended from then on may be deltas. A build that reads at most 7
//      would fail to decode them, hence the version.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ledger::format {

inline constexpr int kOldestFormat = 1;
inline constexpr int kCurrentFormat = 8;

// The bytes of a checkpoint (schema/checkpoint.capnp) after their SHA-256.
// Checkpoints are derived data: one of another version is skipped like a
// damaged one, and `ledger-replay checkpoint --rewrite` writes them anew.
//   2  objects by reference.
//   3  adds the charge history (reservations, configuration epochs, retired
//      versions of charge inputs): a version-2 checkpoint cannot say what a
//      workload was charged at reservation.
inline constexpr std::uint32_t kCheckpointFormat = 3;

// What the ingest's projector writes into `projection` (schema/projection.capnp
// and ingest/projector.h): this number changes whenever it projects some
// object to other bytes than before. The projection is derived data, so a
// change is not a ledger format change; `meta` says which projector wrote
// the ledger's projections, and `ledger-replay verify` (ledger/verify.h)
// can tell projections an older projector wrote from edited ones, and
// reports warn, until `ledger-replay rebuild-projection` writes them anew.
// Written at creation and by a rebuild, never by an append: a ledger whose
// projections an earlier build wrote keeps its older number after this
// build appends to it.
//   1  any projector of the builds that recorded no number (a ledger
//      without the key, records aside, reads as 1).
//   2  the projector that records it.
inline constexpr int kProjectionFormat = 2;
inline constexpr int kProjectionFormatBeforeItWasRecorded = 1;
inline constexpr std::string_view kProjectionFormatKey = "projection-format";
inline constexpr std::size_t kCheckpointChecksumSize = 32;

inline constexpr const char* kLogFamily = "log";
inline constexpr const char* kProjectionFamily = "projection";
inline constexpr const char* kTimeIndexFamily = "time_index";
inline constexpr const char* kEventsFamily = "events";
inline constexpr const char* kLiveFamily = "live";
inline constexpr const char* kCheckpointsFamily = "checkpoints";
inline constexpr const char* kCheckpointObjectsFamily = "checkpoint_objects";
inline constexpr const char* kObjectIndexFamily = "object_index";
inline constexpr const char* kUsageRollupsFamily = "usage_rollups";
inline constexpr const char* kMetaFamily = "meta";

inline constexpr const char* kAcknowledgedHeadFile = "ledger-head";
inline constexpr std::string_view kAcknowledgedHeadMagic = "LEDGHEAD";
inline constexpr std::size_t kAcknowledgedHeadSize = 64;
inline constexpr const char* kVerificationFile = "ledger-verified";

inline constexpr std::string_view kFormatKey = "format";
// events: the start of the dedupe keys earlier builds wrote (see above).
inline constexpr std::string_view kLegacyEventKeyPrefix{"e\0", 2};
inline constexpr std::string_view kHeadKey = "head";
inline constexpr std::string_view kCursorPrefix = "cursor/";
inline constexpr std::string_view kObjectIndexKey = "object_index";
inline constexpr std::string_view kObjectIndexComplete = "complete";
inline constexpr std::string_view kArchiveCutKey = "archive-cut";

// log, since format 8: a record stored as a delta (above, "log").
inline constexpr std::string_view kDeltaMarker{"\xff\xff\xff\xff", 4};
// A delta's base is at most this many seqs before it: a cut rewrites only
// the records within this many after it (ledger_cut.cpp), and a scan keeps
// only this many records' bytes as bases.
inline constexpr std::uint64_t kDeltaWindow = 32768;
// At most this many deltas lie between a record and a full one: a read of
// one record resolves at most this many bases.
inline constexpr std::uint32_t kDeltaMaxDepth = 32;

inline constexpr std::size_t kHashSize = 32;
inline constexpr std::size_t kChunkHeaderSize = 8;

// Big-endian so RocksDB's bytewise order is numeric order.
inline void appendU64(std::string& out, std::uint64_t v) {
  char bytes[8];
  for (int i = 7; i >= 0; --i) {
    bytes[i] = static_cast<char>(v & 0xFF);
    v >>= 8;
  }
  out.append(bytes, sizeof bytes);
}
inline std::string encodeU64(std::uint64_t v) {
  std::string out;
  appendU64(out, v);
  return out;
}

inline std::uint64_t decodeU64(std::string_view b) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && i < b.size(); ++i) {
    v = (v << 8) | static_cast<std::uint8_t>(b[i]);
  }
  return v;
}

inline std::string seqKey(std::uint64_t seq) { return encodeU64(seq); }

// checkpoint_objects: the checkpoint's seq, then the chunk's number.
inline std::string checkpointChunkKey(std::uint64_t checkpointSeq, std::uint32_t chunk) {
  std::string out = encodeU64(checkpointSeq);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(chunk >> shift));
  return out;
}

// Times are signed; flipping the sign bit makes them sort as unsigned.
inline std::string timeKey(std::int64_t timeNs, std::uint64_t seq) {
  return encodeU64(static_cast<std::uint64_t>(timeNs) ^ (1ULL << 63)) + encodeU64(seq);
}
inline std::int64_t timeFromKey(std::string_view key) {
  return static_cast<std::int64_t>(decodeU64(key.substr(0, 8)) ^ (1ULL << 63));
}
inline std::uint64_t seqFromTimeKey(std::string_view key) { return decodeU64(key.substr(8, 8)); }

// usage_rollups: a bucket's grain, then its start as time_index orders times.
inline constexpr std::size_t kUsageRollupKeySize = 9;
inline std::string usageRollupKey(char grain, std::int64_t startNs) {
  return std::string(1, grain) + encodeU64(static_cast<std::uint64_t>(startNs) ^ (1ULL << 63));
}
inline std::int64_t usageRollupStart(std::string_view key) {
  return static_cast<std::int64_t>(decodeU64(key.substr(1, 8)) ^ (1ULL << 63));
}

// The held levels' keys in usage_rollups (above; replay/kueue/held_record.h):
// a kind, then the seq of the record after which they hold.
inline constexpr char kHeldChanges = 'x';
inline constexpr char kHeldSnapshot = 'y';
inline constexpr char kHeldRunEnd = 'z';
inline std::string heldRecordKey(char kind, std::uint64_t seq) {
  return std::string(1, kind) + encodeU64(seq);
}
inline std::uint64_t heldRecordSeq(std::string_view key) { return decodeU64(key.substr(1, 8)); }

// The stored wait data's keys in usage_rollups (above;
// replay/kueue/wait_rollups.h): an hour's admissions by the hour's start, as
// usageRollupKey orders it, and the wait follower's state by the seq after
// which it holds.
inline constexpr char kWaitHour = 'w';
inline constexpr char kWaitState = 'v';
inline std::string waitHourKey(std::int64_t startNs) { return usageRollupKey(kWaitHour, startNs); }
inline std::string waitStateKey(std::uint64_t seq) { return heldRecordKey(kWaitState, seq); }

// object_index: the records of one object, and the objects referring to a uid.
inline std::string objectRecordsPrefix(std::string_view objectKey) {
  std::string out = "r";
  out.append(objectKey).push_back('\0');
  return out;
}
// Appends the record key to `out` (a writer forms one per record into a
// buffer it keeps).
inline void appendObjectRecordKey(std::string& out, std::string_view objectKey, std::uint64_t seq) {
  out.push_back('r');
  out.append(objectKey).push_back('\0');
  appendU64(out, seq);
}
inline std::string objectRecordKey(std::string_view objectKey, std::uint64_t seq) {
  std::string out;
  appendObjectRecordKey(out, objectKey, seq);
  return out;
}
inline std::string referrersPrefix(std::string_view ns, std::string_view uid) {
  std::string out = "o";
  out.append(ns).push_back('\0');
  out.append(uid).push_back('\0');
  return out;
}
inline std::string referrerKey(std::string_view ns, std::string_view uid,
                               std::string_view objectKey) {
  return referrersPrefix(ns, uid).append(objectKey);
}

}  // namespace ledger::format
