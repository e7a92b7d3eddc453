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
#include "ledger/internal/ledger_internal.h"
#include "ledger/internal/log_table.h"
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

// The objects a batch (or a stretch of the rebuild) touches and the seqs of
// each, for the object index and the live view: both are written once per
// object, not once per record, which is fewer and smaller writes into the
// batch, the write-ahead log and the memtables (a bulk import changes each
// object a couple of times per commit: docs/performance.md). Seqs must be
// noted in ascending order.
class BatchObjects {
 public:
  // Notes the record `seq` of the object whose key `key` holds.
  void note(std::string_view key, std::uint64_t seq) {
    auto at = slots_.find(key);
    if (at == slots_.end()) {
      at = slots_.emplace(std::string(key), static_cast<std::uint32_t>(keys_.size())).first;
      keys_.push_back(at->first);
    }
    slotOf_.push_back(at->second);
    seqs_.push_back(seq);
  }

  // Calls fn(objectKey, seqs) for each object in key order, its seqs
  // ascending, then forgets them all.
  template <typename Fn>
  void drain(Fn&& fn) {
    const std::size_t objects = keys_.size();
    // The seqs grouped by object (a counting sort keeps each object's in
    // order).
    start_.assign(objects + 1, 0);
    for (const std::uint32_t slot : slotOf_) ++start_[slot + 1];
    for (std::size_t i = 0; i < objects; ++i) start_[i + 1] += start_[i];
    grouped_.resize(seqs_.size());
    fill_.assign(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < seqs_.size(); ++i) grouped_[fill_[slotOf_[i]]++] = seqs_[i];
    order_.resize(objects);
    for (std::uint32_t i = 0; i < objects; ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(),
              [&](std::uint32_t a, std::uint32_t b) { return keys_[a] < keys_[b]; });
    for (const std::uint32_t slot : order_) {
      fn(keys_[slot], std::span<const std::uint64_t>(grouped_.data() + start_[slot],
                                                     start_[slot + 1] - start_[slot]));
    }
    slots_.clear();
    keys_.clear();
    slotOf_.clear();
    seqs_.clear();
  }

 private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, KeyHash, std::equal_to<>> slots_;
  std::vector<std::string_view> keys_;  // by slot, into slots_' keys
  std::vector<std::uint32_t> slotOf_;   // by noted record
  std::vector<std::uint64_t> seqs_;     // by noted record
  std::vector<std::size_t> start_, fill_;
  std::vector<std::uint64_t> grouped_;
  std::vector<std::uint32_t> order_;
};

// A batch's object_index writes (object_index.h, format.h), for the append
// and the rebuild: one record entry per object, and each referrer key once
// (an object names the same owner in every version).
struct IndexWrites {
  std::string objectKey;  // the last noted record's
  BatchObjects objects;
  std::vector<std::string> referrerKeys;
  std::string entryKey, entryValue;

  // Notes record `r` and leaves its object key in `objectKey`.
  void note(const Record& r) {
    objectKey.clear();
    r.identity.appendObjectKey(objectKey);
    objects.note(objectKey, r.seq);
  }
  // Puts the record entry of one object's seqs.
  void putRecordEntry(rocksdb::WriteBatch& wb, rocksdb::ColumnFamilyHandle* cf,
                      std::string_view key, std::span<const std::uint64_t> seqs) {
    entryKey.clear();
    format::appendObjectRecordKey(entryKey, key, seqs.front());
    entryValue.clear();
    appendLaterRecordSeqs(entryValue, seqs.front(), seqs.subspan(1));
    wb.Put(cf, entryKey, entryValue);
  }
  void putReferrerKeys(rocksdb::WriteBatch& wb, rocksdb::ColumnFamilyHandle* cf) {
    std::sort(referrerKeys.begin(), referrerKeys.end());
    referrerKeys.erase(std::unique(referrerKeys.begin(), referrerKeys.end()), referrerKeys.end());
    for (const std::string& k : referrerKeys) wb.Put(cf, k, rocksdb::Slice());
    referrerKeys.clear();
  }
  // The rebuild's: every noted object's record entry, then the referrers.
  void putAll(rocksdb::WriteBatch& wb, rocksdb::ColumnFamilyHandle* cf) {
    objects.drain([&](std::string_view key, std::span<const std::uint64_t> seqs) {
      putRecordEntry(wb, cf, key, seqs);
    });
    putReferrerKeys(wb, cf);
  }
};

// Appends a message's parts (ScratchMessage::parts) to a value in slices.
void appendSlices(std::span<const std::string_view> parts, std::vector<rocksdb::Slice>& value) {
  for (std::string_view part : parts) value.emplace_back(part.data(), part.size());
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
  Head head = head_;
  // Sized up front and kept: a batch of thousands of records is tens of MB;
  // growing it by doubling copied it again and again, and fresh memory for
  // each batch cost a page fault per page (together about a third of the
  // writing thread on a 20k-event stream).
  std::uint64_t jsonBytes = 0;
  for (const PendingRecord& p : batch) jsonBytes += p.objectJson.size();
  const bool viaTable = !batch.empty() && jsonBytes >= options_.tableCommitBytes;
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
  rocksdb::WriteBatch& wb = *appendBatch_;
  auto* logCf = family(format::kLogFamily);
  auto* projCf = family(format::kProjectionFamily);
  auto* timeCf = family(format::kTimeIndexFamily);
  auto* eventsCf = family(format::kEventsFamily);
  auto* liveCf = family(format::kLiveFamily);
  auto* metaCf = family(format::kMetaFamily);
  auto* indexCf = family(format::kObjectIndexFamily);
  IndexWrites index;
  index.referrerKeys.reserve(batch.size());
  Record record;
  Sha256 chain;
  RecordEncoder encoder;
  // Each record's messages go into the batch in parts, as they lie: per
  // record on the writing thread, a fresh builder, its flat array and a copy
  // into a string were a tenth of it.
  ScratchMessage projected(kProjectedRecordFirstSegmentWords);
  std::vector<rocksdb::Slice> logValue, projectedValue;
  AlignedBuffer projectionBuffer;
  // The dedupe keys, put in key order after the loop (see below).
  std::vector<std::pair<std::string_view, std::uint64_t>> dedupe;
  dedupe.reserve(batch.size());
  std::unique_ptr<LogTable> table;
  if (viaTable) {
    table = std::make_unique<LogTable>(*db_, logCf, families_->logTableOptions,
                                       LogTable::stagingDirectory(dir_));
    if (Status st = table->start(head.seq + 1); !st.isOk()) return st;
  }
  try {
    for (const PendingRecord& p : batch) {
      record.seq = ++head.seq;
      record.type = p.type;
      record.timeNs = p.timeNs;
      if (record.seq > 1 && record.timeNs < head.timeNs) {
        record.timeNs = head.timeNs;  // the contract: times never go backwards
        ++result->timesRaised;
      }
      head.timeNs = record.timeNs;
      record.identity = p.identity;
      const auto encoded = encoder.encode(record, p.objectJson);
      head.hash = chainHash(head.hash, encoded, chain);
      const std::string key = format::seqKey(record.seq);
      const rocksdb::Slice keySlice(key);
      // The chain hash, then the record's parts as they lie in the encoder.
      logValue.assign(
          1, rocksdb::Slice(reinterpret_cast<const char*>(head.hash.data()), head.hash.size()));
      appendSlices(encoded, logValue);
      if (table) {
        if (Status st = table->add(key, logValue); !st.isOk()) return st;
      } else {
        wb.Put(logCf, rocksdb::SliceParts(&keySlice, 1),
               rocksdb::SliceParts(logValue.data(), static_cast<int>(logValue.size())));
      }
      index.note(record);
      fillProjectedRecord(projected, record, p.projection, projectionBuffer, &index.referrerKeys,
                          index.objectKey);
      projectedValue.clear();
      appendSlices(projected.parts(), projectedValue);
      wb.Put(projCf, rocksdb::SliceParts(&keySlice, 1),
             rocksdb::SliceParts(projectedValue.data(), static_cast<int>(projectedValue.size())));
      wb.Put(timeCf, format::timeKey(record.timeNs, record.seq), rocksdb::Slice());
      if (!p.dedupeKey.empty()) dedupe.emplace_back(p.dedupeKey, record.seq);
      // Before the write: lookups of such keys must reach RocksDB from now on.
      if (p.dedupeKey.starts_with(format::kLegacyEventKeyPrefix)) {
        legacyEventKeys_.store(true, std::memory_order_release);
      }
      if (result->firstSeq == 0) result->firstSeq = record.seq;
      result->lastSeq = record.seq;
    }
  } catch (const kj::Exception& e) {
    return Status::invalidArgument(std::string("projection bytes do not decode: ") +
                                   e.getDescription().cStr());
  }
  // Dedupe keys are hashes and object keys come in no order, so each insert
  // into their memtables searched the skip list from the top, a visible share
  // of the writing thread. In key order, each search starts from the
  // previous insert (RocksDB keeps that splice), a short way off.
  // The batch commits as a whole, so the order inside it changes nothing a
  // reader sees; equal keys keep their batch order (the last one wins).
  std::stable_sort(dedupe.begin(), dedupe.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [dedupeKey, seq] : dedupe) {
    wb.Put(eventsCf, rocksdb::Slice(dedupeKey.data(), dedupeKey.size()), format::seqKey(seq));
  }
  index.putReferrerKeys(wb, indexCf);
  // Each object's record entry and its live entry, from its last change in
  // the batch.
  const std::uint64_t firstSeq = head_.seq + 1;
  index.objects.drain([&](std::string_view objectKey, std::span<const std::uint64_t> seqs) {
    index.putRecordEntry(wb, indexCf, objectKey, seqs);
    const PendingRecord& last = batch[seqs.back() - firstSeq];
    const rocksdb::Slice keySlice(objectKey.data(), objectKey.size());
    if (last.type == EventType::kDeleted) {
      wb.Delete(liveCf, keySlice);
    } else {
      wb.Put(liveCf, keySlice, encodeLive(last));
    }
  });
  for (const auto& [source, c] : cursors) {
    wb.Put(metaCf, std::string(format::kCursorPrefix) + source, encodeCursor(c));
  }
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
  head_ = head;
  committedSeq_.store(head.seq, std::memory_order_release);
  // After the log's sync, never before: the file must not name a commit a
  // crash could still take back (format.h).
  if (options_.sync) return writeAcknowledgedHead();
  return Status::ok();
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
