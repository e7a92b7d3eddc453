#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <rocksdb/db.h>
#include <rocksdb/snapshot.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/internal/record_delta.h"
#include "ledger/ledger.h"
#include "schema/k8s/rfc3339.h"

namespace ledger {

Status Ledger::read(std::uint64_t seq, Record* out) const {
  // Past the head: not committed (format.h), whatever the family holds.
  if (seq > committedSeq_.load(std::memory_order_acquire))
    return Status::notFound("no record at seq " + std::to_string(seq));
  if (seq < firstSeq()) return refusedBeforeCut("seq " + std::to_string(seq));
  std::string value;
  auto s =
      db_->Get(rocksdb::ReadOptions(), family(format::kLogFamily), format::seqKey(seq), &value);
  if (!s.ok()) return fromRocks(s, "reading seq " + std::to_string(seq));
  if (value.size() < format::kHashSize)
    return Status::corruption("seq " + std::to_string(seq) + " is truncated");
  std::string_view body = std::string_view(value).substr(format::kHashSize);
  std::string full;
  if (DeltaBody delta; parseDeltaBody(body, &delta)) {
    // The record and its bases from one view: a cut beside this reader
    // rewrites the records whose bases it deletes (rewriteDeltasAcrossCut).
    rocksdb::ManagedSnapshot snapshot(db_.get());
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot.snapshot();
    s = db_->Get(ro, family(format::kLogFamily), format::seqKey(seq), &value);
    if (!s.ok()) return fromRocks(s, "reading seq " + std::to_string(seq));
    if (value.size() < format::kHashSize)
      return Status::corruption("seq " + std::to_string(seq) + " is truncated");
    if (Status st = resolveLogBody(seq, std::string_view(value).substr(format::kHashSize),
                                   snapshot.snapshot(), nullptr, &full, &body);
        !st.isOk())
      return st;
  }
  return decodeRecord(body, out);
}

Status Ledger::scanRecords(std::uint64_t from, std::uint64_t to,
                           const std::function<bool(const Record&, const Digest&)>& fn) const {
  Record record;
  Status decodeError = Status::ok();
  Status st =
      scanLogBytes(from, to, [&](std::uint64_t seq, const Digest& stored, std::string_view bytes) {
        if (Status d = decodeRecord(bytes, &record); !d.isOk()) {
          decodeError = Status::corruption("seq " + std::to_string(seq) + ": " + d.message());
          return false;
        }
        return fn(record, stored);
      });
  return decodeError.isOk() ? st : decodeError;
}

Status Ledger::scanLogBytes(
    std::uint64_t from, std::uint64_t to,
    const std::function<bool(std::uint64_t, const Digest&, std::string_view)>& fn) const {
  if (from < firstSeq()) return refusedBeforeCut("the records from seq " + std::to_string(from));
  // Records past the head are not committed (format.h).
  const std::uint64_t head = committedSeq_.load(std::memory_order_acquire);
  const std::uint64_t last = to == 0 ? head : std::min(to, head);
  // The iterator and the reads of bases before `from` see one view.
  rocksdb::ManagedSnapshot snapshot(db_.get());
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.snapshot = snapshot.snapshot();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, family(format::kLogFamily)));
  Digest stored{};
  RecentRecords recent;
  // Records are kept from the first delta on: a ledger written before
  // format 8, or the part of one written before its upgrade, has none, and
  // copying every record it passes cost a full scan (verify, export) time.
  bool keeping = false;
  std::string full;
  for (it->Seek(format::seqKey(from)); it->Valid(); it->Next()) {
    const std::uint64_t seq = format::decodeU64(it->key().ToStringView());
    if (seq > last) break;
    auto value = it->value().ToStringView();
    if (value.size() < format::kHashSize) {
      return Status::corruption("seq " + std::to_string(seq) + ": record is truncated");
    }
    std::memcpy(stored.data(), value.data(), format::kHashSize);
    std::string_view bytes;
    if (Status st = resolveLogBody(seq, value.substr(format::kHashSize), snapshot.snapshot(),
                                   &recent, &full, &bytes);
        !st.isOk())
      return st;
    // Any record may be the base of a later one (record_delta.h). The first
    // delta's bases were read from the ledger (resolveLogBody).
    keeping = keeping || bytes.data() == full.data();
    if (keeping && seq < last) recent.keep(seq, bytes);
    if (!fn(seq, stored, bytes)) return Status::ok();
  }
  return fromRocks(it->status(), "scanning log");
}

namespace {
constexpr std::uint64_t kShortScanRecords = 50000;
}  // namespace

Status Ledger::scanProjectionWords(
    std::uint64_t from, std::uint64_t to,
    const std::function<bool(std::uint64_t, kj::ArrayPtr<const capnp::word>)>& fn) const {
  if (from < firstSeq()) return refusedBeforeCut("the records from seq " + std::to_string(from));
  rocksdb::ReadOptions ro;
  std::string upper;
  rocksdb::Slice upperSlice;
  if (to != 0) {
    upper = format::seqKey(to + 1);
    upperSlice = rocksdb::Slice(upper);
    ro.iterate_upper_bound = &upperSlice;
  }
  // A long scan reads ahead in big steps; a short one (a query folding the
  // records after its checkpoint, ~200 bytes each on disk) keeps RocksDB's
  // own readahead, which starts small and grows: a fixed 2 MB would read and
  // fault in several times the range on every query.
  if (to == 0 || to - from > kShortScanRecords) ro.readahead_size = 2 << 20;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, family(format::kProjectionFamily)));
  AlignedBuffer buffer;
  for (it->Seek(format::seqKey(from)); it->Valid(); it->Next()) {
    const std::uint64_t seq = format::decodeU64(it->key().ToStringView());
    try {
      if (!fn(seq, buffer.load(it->value().ToStringView()))) return Status::ok();
    } catch (const kj::Exception& e) {
      return Status::corruption("seq " + std::to_string(seq) +
                                ": projection does not decode: " + e.getDescription().cStr());
    }
  }
  return fromRocks(it->status(), "scanning projection");
}

Status Ledger::scanProjections(
    std::uint64_t from, std::uint64_t to,
    const std::function<bool(std::uint64_t, schema::ProjectedRecord::Reader)>& fn) const {
  capnp::ReaderOptions limits;
  limits.traversalLimitInWords = 1ULL << 30;
  return scanProjectionWords(from, to, [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
    capnp::FlatArrayMessageReader reader(w, limits);
    return fn(seq, reader.getRoot<schema::ProjectedRecord>());
  });
}

Status Ledger::readProjectionWords(
    std::uint64_t seq, const std::function<void(kj::ArrayPtr<const capnp::word>)>& fn) const {
  if (seq < firstSeq()) return refusedBeforeCut("seq " + std::to_string(seq));
  rocksdb::PinnableSlice value;
  auto s = db_->Get(rocksdb::ReadOptions(), family(format::kProjectionFamily), format::seqKey(seq),
                    &value);
  if (!s.ok()) return fromRocks(s, "reading projection of seq " + std::to_string(seq));
  thread_local AlignedBuffer buffer;
  try {
    fn(buffer.load(value.ToStringView()));
  } catch (const kj::Exception& e) {
    return Status::corruption("seq " + std::to_string(seq) +
                              ": projection does not decode: " + e.getDescription().cStr());
  }
  return Status::ok();
}

Status Ledger::readProjectionsWords(
    const std::vector<std::uint64_t>& seqs,
    const std::function<void(std::uint64_t, kj::ArrayPtr<const capnp::word>)>& fn) const {
  for (std::size_t i = 1; i < seqs.size(); ++i) {
    if (seqs[i] <= seqs[i - 1]) {
      return Status::invalidArgument("readProjectionsWords: seqs must ascend");
    }
  }
  if (!seqs.empty() && seqs.front() < firstSeq())
    return refusedBeforeCut("seq " + std::to_string(seqs.front()));
  AlignedBuffer buffer;
  return lookUpSorted(
      *db_, family(format::kProjectionFamily), seqs.size(), 256,
      [&](std::size_t i) { return format::seqKey(seqs[i]); },
      [&](std::size_t i, const rocksdb::Status& found, std::string_view value) {
        const std::uint64_t seq = seqs[i];
        if (found.IsNotFound())
          return Status::notFound("no projection for seq " + std::to_string(seq));
        if (!found.ok()) return fromRocks(found, "reading projections");
        try {
          fn(seq, buffer.load(value));
        } catch (const kj::Exception& e) {
          return Status::corruption("seq " + std::to_string(seq) +
                                    ": projection does not decode: " + e.getDescription().cStr());
        }
        return Status::ok();
      });
}

Status Ledger::readProjection(
    std::uint64_t seq, const std::function<void(schema::ProjectedRecord::Reader)>& fn) const {
  return readProjectionWords(seq, [&](kj::ArrayPtr<const capnp::word> w) {
    capnp::FlatArrayMessageReader reader(w);
    fn(reader.getRoot<schema::ProjectedRecord>());
  });
}

Status Ledger::scanRaw(const char* familyName,
                       const std::function<void(std::string_view, std::string_view)>& fn) const {
  if (families_->byName.find(std::string_view(familyName)) == families_->byName.end()) {
    // A format-1 ledger opened read-only has no checkpoint_objects: empty.
    const bool known =
        std::any_of(std::begin(kFamilyNames), std::end(kFamilyNames),
                    [&](const char* n) { return std::string_view(n) == familyName; });
    if (known) return Status::ok();
    return Status::invalidArgument(std::string("no column family ") + familyName);
  }
  rocksdb::ReadOptions ro;
  ro.readahead_size = 2 << 20;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, family(familyName)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    fn(it->key().ToStringView(), it->value().ToStringView());
  }
  return fromRocks(it->status(), "scanning");
}

Status Ledger::objectIndexComplete(bool* complete) const {
  *complete = false;
  if (family(format::kObjectIndexFamily) == nullptr) return Status::ok();
  std::string value;
  Status st = getRaw(format::kMetaFamily, format::kObjectIndexKey, &value);
  if (st.isNotFound()) return Status::ok();
  if (!st.isOk()) return st;
  *complete = value == format::kObjectIndexComplete;
  return Status::ok();
}

Status Ledger::scanObjectIndex(
    std::string_view prefix,
    const std::function<void(std::string_view key, std::string_view value)>& fn) const {
  auto* cf = family(format::kObjectIndexFamily);
  if (cf == nullptr) return Status::ok();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf));
  const rocksdb::Slice start(prefix.data(), prefix.size());
  for (it->Seek(start); it->Valid() && it->key().starts_with(start); it->Next()) {
    fn(it->key().ToStringView(), it->value().ToStringView());
  }
  return fromRocks(it->status(), "reading object index");
}

Status Ledger::seekObjectIndex(std::string_view from, std::string* key) const {
  key->clear();
  auto* cf = family(format::kObjectIndexFamily);
  if (cf == nullptr) return Status::ok();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf));
  it->Seek(rocksdb::Slice(from.data(), from.size()));
  if (it->Valid()) key->assign(it->key().data(), it->key().size());
  return fromRocks(it->status(), "seeking object index");
}

Status Ledger::seqAtOrBefore(std::int64_t timeNs, std::uint64_t* seq) const {
  *seq = 0;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kTimeIndexFamily)));
  it->SeekForPrev(format::timeKey(timeNs, UINT64_MAX));
  if (it->Valid()) *seq = format::seqFromTimeKey(it->key().ToStringView());
  if (!it->status().ok()) return fromRocks(it->status(), "seeking time index");
  // After the cut the index starts after it: a moment from the last archived
  // record's time on is the state at the cut (its checkpoint); an earlier
  // one needs the archive.
  if (*seq == 0 && cutSeq_.load(std::memory_order_acquire) != 0) {
    std::unique_lock lock(cutMu_);
    if (timeNs < cut_->timeNs) {
      lock.unlock();
      return refusedBeforeCut("the moment " + formatRfc3339(timeNs));
    }
    *seq = cut_->seq;
  }
  return Status::ok();
}

Status Ledger::timeOf(std::uint64_t seq, std::int64_t* timeNs) const {
  if (seq == 1 || seq == cutSeq_.load(std::memory_order_acquire)) {
    std::lock_guard lock(cutMu_);
    if (cut_ && (seq == cut_->seq || seq == 1)) {
      *timeNs = seq == 1 ? cut_->firstTimeNs : cut_->timeNs;
      return Status::ok();
    }
  }
  if (seq < firstSeq()) return refusedBeforeCut("seq " + std::to_string(seq));
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), family(format::kProjectionFamily), format::seqKey(seq),
                    &value);
  if (!s.ok()) return fromRocks(s, "reading seq " + std::to_string(seq));
  try {
    AlignedBuffer buffer;
    capnp::FlatArrayMessageReader reader(buffer.load(value));
    *timeNs = reader.getRoot<schema::ProjectedRecord>().getTimeNs();
  } catch (const kj::Exception& e) {
    return Status::corruption("seq " + std::to_string(seq) + ": projection does not decode");
  }
  return Status::ok();
}

Status Ledger::hasEvent(std::string_view dedupeKey, bool* found) const {
  if (dedupeKey.starts_with(format::kLegacyEventKeyPrefix) &&
      !legacyEventKeys_.load(std::memory_order_acquire)) {
    *found = false;
    return Status::ok();
  }
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), family(format::kEventsFamily),
                    rocksdb::Slice(dedupeKey.data(), dedupeKey.size()), &value);
  *found = s.ok();
  if (s.ok() || s.IsNotFound()) return Status::ok();
  return fromRocks(s, "looking up event");
}

Status Ledger::eventSeq(std::string_view dedupeKey, std::uint64_t* seq) const {
  if (dedupeKey.starts_with(format::kLegacyEventKeyPrefix) &&
      !legacyEventKeys_.load(std::memory_order_acquire)) {
    return Status::notFound("no event under that key");
  }
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), family(format::kEventsFamily),
                    rocksdb::Slice(dedupeKey.data(), dedupeKey.size()), &value);
  if (s.IsNotFound()) return Status::notFound("no event under that key");
  if (!s.ok()) return fromRocks(s, "looking up event");
  if (value.size() != 8) return Status::corruption("an event key's seq is not 8 bytes");
  *seq = format::decodeU64(value);
  return Status::ok();
}

Status Ledger::liveObject(std::string_view objectKey, LiveObject* out) const {
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), family(format::kLiveFamily),
                    rocksdb::Slice(objectKey.data(), objectKey.size()), &value);
  if (!s.ok()) return fromRocks(s, "looking up object");
  decodeLive(value, out);
  return Status::ok();
}

Status Ledger::scanLive(std::string_view prefix,
                        const std::function<void(std::string_view, const LiveObject&)>& fn) const {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kLiveFamily)));
  LiveObject obj;
  for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size())); it->Valid(); it->Next()) {
    auto key = it->key().ToStringView();
    if (key.substr(0, prefix.size()) != prefix) break;
    decodeLive(it->value().ToStringView(), &obj);
    fn(key, obj);
  }
  return fromRocks(it->status(), "scanning live objects");
}

Status Ledger::cursor(std::string_view source, Cursor* out) const {
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), family(format::kMetaFamily),
                    std::string(format::kCursorPrefix) + std::string(source), &value);
  if (!s.ok()) return fromRocks(s, "reading cursor");
  if (value.size() < 8)
    return Status::corruption("cursor for " + std::string(source) + " is malformed");
  out->position = format::decodeU64(value);
  out->resourceVersion = value.substr(8);
  return Status::ok();
}

}  // namespace ledger
