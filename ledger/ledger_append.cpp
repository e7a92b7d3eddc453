#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <unordered_map>

#include "ledger/format.h"
#include "ledger/internal/index_writes.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/internal/log_table.h"
#include "ledger/internal/record_delta.h"
#include "ledger/ledger.h"
#include "ledger/object_index.h"
#include "ledger/record_capnp.h"
#include "ledger/scratch_message.h"

namespace ledger {

namespace {

std::string encodeHead(std::uint64_t seq, const Digest& hash, std::int64_t timeNs) {
  std::string out = format::encodeU64(seq);
  out.append(reinterpret_cast<const char*>(hash.data()), hash.size());
  out += format::encodeU64(static_cast<std::uint64_t>(timeNs));
  return out;
}

std::string encodeCursor(const Cursor& c) {
  return format::encodeU64(c.position) + c.resourceVersion;
}

// A ProjectedRecord's first segment: a larger one would change the bytes of
// large records, which equal ingests compare.
constexpr std::size_t kProjectedRecordFirstSegmentWords = 512;

// Builds the ProjectedRecord for a header and Projection bytes in `message`.
// The bytes come from a heap string, word-aligned in practice, and are read
// where they lie instead of copied to an aligned buffer allocated per record.
// When `referrerKeys` is set, appends the record's referrer keys to it
// (object_index.h); `objectKey` is then the record's object key.
void fillProjectedRecord(ScratchMessage& message, const Record& header,
                         std::string_view projectionBytes, AlignedBuffer& buffer,
                         std::vector<std::string>* referrerKeys = nullptr,
                         std::string_view objectKey = {}) {
  auto root = message.start().initRoot<schema::ProjectedRecord>();
  root.setType(static_cast<schema::EventType>(header.type));
  root.setTimeNs(header.timeNs);
  setIdentity(root.initIdentity(), header.identity);
  if (!projectionBytes.empty()) {
    kj::ArrayPtr<const capnp::word> words;
    if (reinterpret_cast<std::uintptr_t>(projectionBytes.data()) % alignof(capnp::word) == 0) {
      words = kj::arrayPtr(reinterpret_cast<const capnp::word*>(projectionBytes.data()),
                           projectionBytes.size() / sizeof(capnp::word));
    } else {
      words = buffer.load(projectionBytes);
    }
    capnp::FlatArrayMessageReader reader(words);
    const auto projection = reader.getRoot<schema::Projection>();
    root.setObject(projection);
    if (referrerKeys) {
      appendReferrerKeys(header.identity.namespace_, objectKey, projection, *referrerKeys);
    }
  } else {
    root.initObject().getBody().setOther();
  }
}

// Appends a message's parts (ScratchMessage::parts) to a value in slices.
void appendSlices(std::span<const std::string_view> parts, std::vector<rocksdb::Slice>& value) {
  for (std::string_view part : parts) value.emplace_back(part.data(), part.size());
}

// The families one append writes.
struct AppendFamilies {
  rocksdb::ColumnFamilyHandle* log;
  rocksdb::ColumnFamilyHandle* projection;
  rocksdb::ColumnFamilyHandle* time;
  rocksdb::ColumnFamilyHandle* events;
  rocksdb::ColumnFamilyHandle* live;
  rocksdb::ColumnFamilyHandle* index;
};

// One append's writes: record by record the log (into the batch, or the
// table file of a large commit), the projection and the time index; then,
// per key and per object, the dedupe keys, the object index and the live
// view. Starts after the head it is given and moves it on.
class AppendWrites {
 public:
  AppendWrites(rocksdb::WriteBatch& wb, const AppendFamilies& cf, LogTable* table,
               DeltaBases& bases, std::uint64_t deltaFloor, std::size_t records, std::uint64_t seq,
               const Digest& hash, std::int64_t timeNs)
      : wb_(wb),
        cf_(cf),
        table_(table),
        bases_(bases),
        deltaFloor_(deltaFloor),
        seq_(seq),
        hash_(hash),
        timeNs_(timeNs) {
    index_.referrerKeys.reserve(records);
    dedupe_.reserve(records);
  }

  // The record after the head for `p`. Throws kj::Exception when its
  // projection bytes do not decode.
  [[nodiscard]] Status add(const PendingRecord& p, AppendResult* result);
  // The writes per key and per object, after the last add of `batch`.
  void finish(const std::vector<PendingRecord>& batch);

  std::uint64_t seq() const { return seq_; }
  const Digest& hash() const { return hash_; }
  std::int64_t timeNs() const { return timeNs_; }
  // A dedupe key of an earlier build's format was written (format.h).
  bool wroteLegacyKey() const { return legacyKey_; }

 private:
  rocksdb::WriteBatch& wb_;
  const AppendFamilies cf_;
  LogTable* const table_;
  DeltaBases& bases_;
  const std::uint64_t deltaFloor_;
  std::uint64_t seq_;
  Digest hash_;
  std::int64_t timeNs_;
  std::uint64_t firstSeq_ = 0;
  bool legacyKey_ = false;
  IndexWrites index_;
  Record record_;
  Sha256 chain_;
  RecordEncoder encoder_;
  std::string recordBytes_;  // the record's LogRecord bytes, joined
  // Each record's messages go into the batch in parts, as they lie: per
  // record on the writing thread, a fresh builder, its flat array and a copy
  // into a string were a tenth of it.
  ScratchMessage projected_{kProjectedRecordFirstSegmentWords};
  std::vector<rocksdb::Slice> logValue_, projectedValue_;
  AlignedBuffer projectionBuffer_;
  // The dedupe keys, put in key order by finish().
  std::vector<std::pair<std::string_view, std::uint64_t>> dedupe_;
};

Status AppendWrites::add(const PendingRecord& p, AppendResult* result) {
  record_.seq = ++seq_;
  if (firstSeq_ == 0) firstSeq_ = seq_;
  record_.type = p.type;
  record_.timeNs = p.timeNs;
  if (record_.seq > 1 && record_.timeNs < timeNs_) {
    record_.timeNs = timeNs_;  // the contract: times never go backwards
    ++result->timesRaised;
  }
  timeNs_ = record_.timeNs;
  record_.identity = p.identity;
  const auto encoded = encoder_.encode(record_, p.objectJson);
  hash_ = chainHash(hash_, encoded, chain_);
  const std::string key = format::seqKey(record_.seq);
  const rocksdb::Slice keySlice(key);
  index_.note(record_);
  // The chain hash, then the record's bytes, stored whole or as a delta
  // against the object's previous record (the hash is the full bytes').
  recordBytes_.clear();
  for (std::string_view part : encoded) recordBytes_ += part;
  const std::string_view body =
      bases_.body(record_.seq, index_.objectKey, recordBytes_, deltaFloor_);
  logValue_.assign(1, rocksdb::Slice(reinterpret_cast<const char*>(hash_.data()), hash_.size()));
  logValue_.emplace_back(body.data(), body.size());
  if (table_ != nullptr) {
    if (Status st = table_->add(key, logValue_); !st.isOk()) return st;
  } else {
    wb_.Put(cf_.log, rocksdb::SliceParts(&keySlice, 1),
            rocksdb::SliceParts(logValue_.data(), static_cast<int>(logValue_.size())));
  }
  fillProjectedRecord(projected_, record_, p.projection, projectionBuffer_, &index_.referrerKeys,
                      index_.objectKey);
  projectedValue_.clear();
  appendSlices(projected_.parts(), projectedValue_);
  wb_.Put(cf_.projection, rocksdb::SliceParts(&keySlice, 1),
          rocksdb::SliceParts(projectedValue_.data(), static_cast<int>(projectedValue_.size())));
  wb_.Put(cf_.time, format::timeKey(record_.timeNs, record_.seq), rocksdb::Slice());
  if (!p.dedupeKey.empty()) dedupe_.emplace_back(p.dedupeKey, record_.seq);
  legacyKey_ |= p.dedupeKey.starts_with(format::kLegacyEventKeyPrefix);
  if (result->firstSeq == 0) result->firstSeq = record_.seq;
  result->lastSeq = record_.seq;
  return Status::ok();
}

void AppendWrites::finish(const std::vector<PendingRecord>& batch) {
  // Dedupe keys are hashes and object keys come in no order, so each insert
  // into their memtables searched the skip list from the top, a visible share
  // of the writing thread. In key order, each search starts from the
  // previous insert (RocksDB keeps that splice), a short way off.
  // The batch commits as a whole, so the order inside it changes nothing a
  // reader sees; equal keys keep their batch order (the last one wins).
  std::stable_sort(dedupe_.begin(), dedupe_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [dedupeKey, seq] : dedupe_) {
    wb_.Put(cf_.events, rocksdb::Slice(dedupeKey.data(), dedupeKey.size()), format::seqKey(seq));
  }
  index_.putReferrerKeys(wb_, cf_.index);
  // Each object's record entry and its live entry, from its last change in
  // the batch.
  index_.objects.drain([&](std::string_view objectKey, std::span<const std::uint64_t> seqs) {
    index_.putRecordEntry(wb_, cf_.index, objectKey, seqs);
    const PendingRecord& last = batch[seqs.back() - firstSeq_];
    const rocksdb::Slice keySlice(objectKey.data(), objectKey.size());
    if (last.type == EventType::kDeleted) {
      wb_.Delete(cf_.live, keySlice);
    } else {
      wb_.Put(cf_.live, keySlice, encodeLive(last));
    }
  });
}

}  // namespace

std::string buildProjectedRecord(const Record& header, std::string_view projectionBytes) {
  ScratchMessage message(kProjectedRecordFirstSegmentWords);
  AlignedBuffer buffer;
  fillProjectedRecord(message, header, projectionBytes, buffer);
  return message.bytes();
}

Status Ledger::putCursor(std::string_view source, const Cursor& cursor) {
  if (options_.readOnly) return Status::invalidArgument("putCursor: the ledger is read-only");
  rocksdb::WriteOptions wo;
  wo.sync = false;
  return fromRocks(
      db_->Put(wo, family(format::kMetaFamily),
               std::string(format::kCursorPrefix) + std::string(source), encodeCursor(cursor)),
      "writing cursor");
}

Status Ledger::append(const std::vector<PendingRecord>& batch,
                      const std::map<std::string, Cursor>& cursors, AppendResult* result) {
  if (options_.readOnly) return Status::invalidArgument("ledger opened read-only");
  *result = AppendResult{};
  if (batch.empty() && cursors.empty()) return Status::ok();
  // The cut takes the lock to raise the floor between two appends (cutArchived).
  std::lock_guard appendLock(appendMu_);
  if (!deltaBases_) deltaBases_ = std::make_unique<DeltaBases>();
  // A failed append's seqs are written again by the next one: the bases it
  // kept name records that were never committed.
  struct ForgetUnlessCommitted {
    DeltaBases& bases;
    bool committed = false;
    ~ForgetUnlessCommitted() {
      if (!committed) bases.clear();
    }
  } forget{*deltaBases_};
  std::uint64_t jsonBytes = 0;
  for (const PendingRecord& p : batch) jsonBytes += p.objectJson.size();
  const bool viaTable = !batch.empty() && jsonBytes >= options_.tableCommitBytes;
  rocksdb::WriteBatch& wb = appendBatchFor(batch, viaTable);
  auto* logCf = family(format::kLogFamily);
  std::unique_ptr<LogTable> table;
  if (viaTable) {
    table = std::make_unique<LogTable>(*db_, logCf, families_->logTableOptions,
                                       LogTable::stagingDirectory(dir_));
    if (Status st = table->start(head_.seq + 1); !st.isOk()) return st;
  }
  AppendWrites writes(wb,
                      {logCf, family(format::kProjectionFamily), family(format::kTimeIndexFamily),
                       family(format::kEventsFamily), family(format::kLiveFamily),
                       family(format::kObjectIndexFamily)},
                      table.get(), *deltaBases_, deltaFloor_.load(std::memory_order_acquire),
                      batch.size(), head_.seq, head_.hash, head_.timeNs);
  try {
    for (const PendingRecord& p : batch) {
      if (Status st = writes.add(p, result); !st.isOk()) return st;
    }
  } catch (const kj::Exception& e) {
    return Status::invalidArgument(std::string("projection bytes do not decode: ") +
                                   e.getDescription().cStr());
  }
  writes.finish(batch);
  // Before the write: lookups of such keys must reach RocksDB from now on.
  if (writes.wroteLegacyKey()) legacyEventKeys_.store(true, std::memory_order_release);
  auto* metaCf = family(format::kMetaFamily);
  for (const auto& [source, c] : cursors) {
    wb.Put(metaCf, std::string(format::kCursorPrefix) + source, encodeCursor(c));
  }
  const Head head{writes.seq(), writes.hash(), writes.timeNs()};
  wb.Put(metaCf, rocksdb::Slice(format::kHeadKey.data(), format::kHeadKey.size()),
         encodeHead(head.seq, head.hash, head.timeNs));
  // The log records first, then the batch that moves the head: until that
  // batch commits, the records past the head are not part of the ledger
  // (format.h), and a crash in between leaves nothing a reader would see.
  if (table) {
    if (Status st = table->ingest(); !st.isOk()) return st;
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  auto s = db_->Write(wo, &wb);
  if (!s.ok()) return fromRocks(s, "appending to ledger");
  forget.committed = true;
  head_ = head;
  committedSeq_.store(head.seq, std::memory_order_release);
  // After the log's sync, never before: the file must not name a commit a
  // crash could still take back (format.h).
  if (options_.sync) return writeAcknowledgedHead();
  return Status::ok();
}

rocksdb::WriteBatch& Ledger::appendBatchFor(const std::vector<PendingRecord>& batch,
                                            bool viaTable) {
  // Sized up front and kept: a batch of thousands of records is tens of MB;
  // growing it by doubling copied it again and again, and fresh memory for
  // each batch cost a page fault per page (together about a third of the
  // writing thread on a 20k-event stream).
  std::size_t reserve = 4096;
  for (const PendingRecord& p : batch) {
    reserve += p.projection.size() + 640;  // + keys, headers
    if (!viaTable) reserve += p.objectJson.size();
  }
  if (!appendBatch_ || appendBatchBytes_ < reserve) {
    appendBatch_ = std::make_unique<rocksdb::WriteBatch>(reserve);
    appendBatchBytes_ = reserve;
  } else {
    appendBatch_->Clear();
  }
  return *appendBatch_;
}

Status Ledger::rebuildProjection(const std::function<std::string(const Record&)>& project,
                                 std::uint64_t* rewritten) {
  *rewritten = 0;
  // It reads every record from seq 1, and would drop the rollups of the
  // hours only the archive's records could write again.
  if (firstSeq() > 1) return refusedBeforeCut("rebuilding the projection");
  rocksdb::WriteBatch wb;
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  auto* projCf = family(format::kProjectionFamily);
  auto* indexCf = family(format::kObjectIndexFamily);
  auto* metaCf = family(format::kMetaFamily);
  const rocksdb::Slice markerKey(format::kObjectIndexKey.data(), format::kObjectIndexKey.size());
  // The object index is rebuilt with the projection: not complete until the
  // last record is indexed again, and nothing of the old one kept.
  wb.Delete(metaCf, markerKey);
  wb.DeleteRange(indexCf, rocksdb::Slice(""), rocksdb::Slice("\xff", 1));
  // Usage rollups integrate the projections: none survive a rebuild
  // (ledger-replay writes them again after it).
  if (auto* rollupsCf = family(format::kUsageRollupsFamily); rollupsCf != nullptr) {
    wb.DeleteRange(rollupsCf, rocksdb::Slice("\0", 1), rocksdb::Slice("\xff", 1));
  }
  ScratchMessage message(kProjectedRecordFirstSegmentWords);
  AlignedBuffer buffer;
  IndexWrites index;
  Status inner = Status::ok();
  Status st = scanRecords(1, 0, [&](const Record& r, const Digest&) {
    const std::string projection = project(r);
    index.note(r);
    fillProjectedRecord(message, r, projection, buffer, &index.referrerKeys, index.objectKey);
    wb.Put(projCf, format::seqKey(r.seq), message.bytes());
    ++*rewritten;
    if (wb.Count() >= 1024) {
      index.putAll(wb, indexCf);
      inner = fromRocks(db_->Write(wo, &wb), "rewriting projection");
      wb.Clear();
      if (!inner.isOk()) return false;
    }
    return true;
  });
  if (!st.isOk()) return st;
  if (!inner.isOk()) return inner;
  index.putAll(wb, indexCf);
  wb.Put(metaCf, markerKey,
         rocksdb::Slice(format::kObjectIndexComplete.data(), format::kObjectIndexComplete.size()));
  // With the last projections: a rebuild stopped earlier leaves the older
  // number, and verify and reports keep saying the rebuild is due.
  if (Status fmt = writeProjectionFormat(&wb); !fmt.isOk()) return fmt;
  if (Status done = fromRocks(db_->Write(wo, &wb), "rewriting projection"); !done.isOk()) {
    return done;
  }
  projectionFormat_ = format::kProjectionFormat;
  return Status::ok();
}

Status Ledger::writeProjectionFormat(rocksdb::WriteBatch* batch) {
  const std::string value = std::to_string(format::kProjectionFormat);
  const rocksdb::Slice key(format::kProjectionFormatKey.data(),
                           format::kProjectionFormatKey.size());
  if (batch != nullptr) return fromRocks(batch->Put(family(format::kMetaFamily), key, value), "");
  rocksdb::WriteOptions wo;
  wo.sync = true;
  Status st = fromRocks(db_->Put(wo, family(format::kMetaFamily), key, value),
                        "recording the projection format");
  if (st.isOk()) projectionFormat_ = format::kProjectionFormat;
  return st;
}

}  // namespace ledger
