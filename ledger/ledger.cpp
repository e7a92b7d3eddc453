#include "ledger.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <sys/resource.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <unordered_set>

#include "format.h"
#include "record_capnp.h"
#include "scratch_message.h"

namespace ledger {

namespace {

const char* const kFamilyNames[] = {
    "default",
    format::kLogFamily,
    format::kProjectionFamily,
    format::kTimeIndexFamily,
    format::kEventsFamily,
    format::kLiveFamily,
    format::kCheckpointsFamily,
    format::kCheckpointObjectsFamily,
    format::kMetaFamily,
};

Status fromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::ok();
  if (s.IsNotFound()) return Status::notFound(what + ": " + s.ToString());
  if (s.IsCorruption()) return Status::corruption(what + ": " + s.ToString());
  if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
    return Status::busy(what + ": another process holds the ledger (" + s.ToString() + ")");
  }
  return Status::ioError(what + ": " + s.ToString());
}

rocksdb::ColumnFamilyOptions familyOptions(const std::string& name) {
  rocksdb::ColumnFamilyOptions cf;
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 32 * 1024;
  if (name == format::kLogFamily) {
    // Raw JSON compresses well; it is read rarely (verify, export).
    cf.compression = rocksdb::kZSTD;
    cf.bottommost_compression = rocksdb::kZSTD;
    table.block_size = 64 * 1024;
  } else if (name == format::kProjectionFamily) {
    // Replays scan it and point-in-time queries look up a couple of thousand
    // records scattered over the whole history, one block each: zstd's
    // decompression was half of a query's CPU. LZ4 at every level stores
    // about a third more here (1% of the raw JSON at 1M events) and halves
    // query time.
    cf.compression = rocksdb::kLZ4Compression;
    cf.bottommost_compression = rocksdb::kLZ4Compression;
  } else if (name == format::kCheckpointsFamily) {
    // Every point-in-time query reads one checkpoint (about 70 bytes per
    // live object) before it can start reading the objects: zstd at the
    // bottom made that read 0.49 ms against 0.21 ms with LZ4, which stores
    // 40% more (on 10M records, 245 against 146 MB, 1.7% of the ledger).
    cf.compression = rocksdb::kLZ4Compression;
    cf.bottommost_compression = rocksdb::kLZ4Compression;
  } else if (name == format::kCheckpointObjectsFamily) {
    // Read by every point-in-time query, a chunk or two per block.
    cf.compression = rocksdb::kLZ4Compression;
    cf.bottommost_compression = rocksdb::kLZ4Compression;
  } else {
    cf.compression = rocksdb::kLZ4Compression;
  }
  if (name == format::kEventsFamily || name == format::kLiveFamily) {
    // Ingest looks up every event's dedupe key, and almost all are absent:
    // a Bloom filter answers those without reading a block from each level.
    // Older table files without filters stay readable (no format change).
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  }
  if (name == format::kEventsFamily) {
    // The same for the memtable, where each absent key was searched for in
    // the skip list: 8% of the writing thread on 1M generated events. 1.3 MB
    // of filter per 64 MB memtable.
    cf.memtable_prefix_bloom_size_ratio = 0.02;
    cf.memtable_whole_key_filtering = true;
  }
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return cf;
}

// RocksDB's default (-1) opens every table file of every family when the
// ledger opens, with its index and filter blocks: on a 10M-record ledger (464
// files) that was most of a `ledger-query state` run (0.16-0.24 s for a 7 ms
// query and a 25 ms report), and a ledger with more files than the process
// may open (often 1024) would not open at all. A bound opens files as reads
// first touch them and keeps them open up to the bound; the margin leaves
// descriptors for the write-ahead log, the manifest and the caller.
int maxOpenTableFiles() {
  constexpr rlim_t kMargin = 128;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 65536;
  // RocksDB raises anything below 20 to 20.
  if (limit.rlim_cur <= 2 * kMargin) return static_cast<int>(limit.rlim_cur / 2);
  return static_cast<int>(std::min<rlim_t>(limit.rlim_cur - kMargin, 65536));
}

std::string encodeHead(std::uint64_t seq, const Digest& hash, std::int64_t timeNs) {
  std::string out = format::encodeU64(seq);
  out.append(reinterpret_cast<const char*>(hash.data()), hash.size());
  out += format::encodeU64(static_cast<std::uint64_t>(timeNs));
  return out;
}

std::string encodeCursor(const Cursor& c) {
  return format::encodeU64(c.position) + c.resourceVersion;
}

// Cap'n Proto wants word-aligned input; RocksDB slices have no alignment.
class AlignedBuffer {
 public:
  kj::ArrayPtr<const capnp::word> load(std::string_view bytes) {
    const std::size_t words = (bytes.size() + sizeof(capnp::word) - 1) / sizeof(capnp::word);
    if (words_.size() < words) {
      words_ = kj::heapArray<capnp::word>(std::max(words, words_.size() * 2));
    }
    if (!bytes.empty()) std::memcpy(words_.begin(), bytes.data(), bytes.size());
    return kj::arrayPtr(words_.begin(), bytes.size() / sizeof(capnp::word));
  }

 private:
  kj::Array<capnp::word> words_;  // capnp::word is not copyable: no std::vector
};

// A checkpoint chunk's header (format.h): XXH3-64 of the payload. A query
// checks a few MB of chunks; RocksDB's CRC32C (software in Debian's build)
// took a third of it, SHA-256 would take a tenth.
std::string chunkHeader(std::string_view payload) {
  return format::encodeU64(XXH3_64bits(payload.data(), payload.size()));
}

// Point lookups of `count` keys (ascending) in batches of `batch`, each
// answered in order by value(i, status, bytes); stops at the first failure
// it returns. MultiGet, not an iterator: a point lookup consults only the
// one table file whose range holds the key, where an iterator's Seek
// positions every level. Batches bound the pinned blocks.
Status lookUpSorted(
    rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, std::size_t count, std::size_t batch,
    const std::function<std::string(std::size_t)>& key,
    const std::function<Status(std::size_t, const rocksdb::Status&, std::string_view)>& value) {
  std::vector<std::string> keys(std::min(count, batch));
  std::vector<rocksdb::Slice> slices(keys.size());
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  for (std::size_t start = 0; start < count; start += batch) {
    const std::size_t n = std::min(batch, count - start);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = key(start + i);
      slices[i] = keys[i];
      values[i].Reset();
    }
    db.MultiGet(rocksdb::ReadOptions(), family, n, slices.data(), values.data(), statuses.data(),
                /*sorted_input=*/true);
    for (std::size_t i = 0; i < n; ++i) {
      if (Status st = value(start + i, statuses[i], values[i].ToStringView()); !st.isOk()) {
        return st;
      }
    }
  }
  return Status::ok();
}

}  // namespace

struct Ledger::Families {
  std::map<std::string, rocksdb::ColumnFamilyHandle*, std::less<>> byName;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
};

rocksdb::ColumnFamilyHandle* Ledger::family(const char* name) const {
  auto it = families_->byName.find(std::string_view(name));
  return it == families_->byName.end() ? nullptr : it->second;
}

Status Ledger::open(const std::string& dir, const Options& options, std::unique_ptr<Ledger>* out) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec);
  if (!exists && (!options.createIfMissing || options.readOnly)) {
    return Status::notFound("no ledger at " + dir);
  }
  rocksdb::DBOptions dbo;
  dbo.create_if_missing = options.createIfMissing;
  dbo.create_missing_column_families = !options.readOnly;
  dbo.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  dbo.keep_log_file_num = 2;
  dbo.max_background_jobs = 2;
  dbo.paranoid_checks = true;
  dbo.max_open_files = maxOpenTableFiles();
  dbo.max_total_wal_size = options.maxWalBytes;

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  std::vector<std::string> present;
  if (options.readOnly) {
    // A version-1 ledger has no checkpoint_objects, and a read-only open
    // cannot create it: open what is there.
    auto s = rocksdb::DB::ListColumnFamilies(dbo, dir, &present);
    if (!s.ok()) return fromRocks(s, "opening ledger " + dir);
  }
  for (const char* name : kFamilyNames) {
    const bool optional = std::string_view(name) == format::kCheckpointObjectsFamily;
    if (options.readOnly && std::find(present.begin(), present.end(), name) == present.end()) {
      if (optional) continue;
      return Status::corruption("ledger " + dir + " has no column family " + name);
    }
    descriptors.emplace_back(name, familyOptions(name));
  }

  std::unique_ptr<Ledger> ledger(new Ledger());
  ledger->dir_ = dir;
  ledger->options_ = options;
  ledger->families_ = std::make_unique<Families>();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  if (options.readOnly) {
    s = rocksdb::DB::OpenForReadOnly(dbo, dir, descriptors, &ledger->families_->handles, &raw);
  } else {
    s = rocksdb::DB::Open(dbo, dir, descriptors, &ledger->families_->handles, &raw);
  }
  if (!s.ok()) return fromRocks(s, "opening ledger " + dir);
  ledger->db_.reset(raw);
  for (std::size_t i = 0; i < descriptors.size(); ++i) {
    ledger->families_->byName[descriptors[i].name] = ledger->families_->handles[i];
  }

  // Format version: written at creation (and by an upgrade), checked on every open.
  auto writeCurrentFormat = [&](const char* what) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    Status st =
        fromRocks(raw->Put(wo, ledger->family(format::kMetaFamily),
                           rocksdb::Slice(format::kFormatKey.data(), format::kFormatKey.size()),
                           std::to_string(format::kCurrentFormat)),
                  what);
    if (st.isOk()) ledger->formatVersion_ = format::kCurrentFormat;
    return st;
  };
  std::string value;
  s = raw->Get(rocksdb::ReadOptions(), ledger->family(format::kMetaFamily),
               rocksdb::Slice(format::kFormatKey.data(), format::kFormatKey.size()), &value);
  if (s.IsNotFound()) {
    std::string anyLog;
    std::unique_ptr<rocksdb::Iterator> it(
        raw->NewIterator(rocksdb::ReadOptions(), ledger->family(format::kLogFamily)));
    it->SeekToFirst();
    if (it->Valid())
      return Status::corruption("ledger " + dir + " has records but no format version");
    if (options.readOnly) return Status::notFound("ledger " + dir + " is empty and uninitialised");
    if (Status st = writeCurrentFormat("initialising ledger"); !st.isOk()) return st;
  } else if (!s.ok()) {
    return fromRocks(s, "reading ledger format");
  } else {
    int version = 0;
    try {
      version = std::stoi(value);
    } catch (...) {
      return Status::incompatible("ledger " + dir + " has an unreadable format version '" + value +
                                  "'");
    }
    if (version < format::kOldestFormat || version > format::kCurrentFormat) {
      return Status::incompatible("ledger " + dir + " has format version " +
                                  std::to_string(version) + "; this build reads versions " +
                                  std::to_string(format::kOldestFormat) + " to " +
                                  std::to_string(format::kCurrentFormat) +
                                  (version > format::kCurrentFormat
                                       ? " (it was written by a newer ledger; upgrade)"
                                       : " (too old; export it with the release that wrote it)"));
    }
    ledger->formatVersion_ = version;
    if (version < format::kCurrentFormat && !options.readOnly) {
      // 1 -> 2: the only change is the checkpoint_objects family, which the
      // open above created empty.
      if (Status st = writeCurrentFormat("upgrading ledger format"); !st.isOk()) return st;
    }
  }

  s = raw->Get(rocksdb::ReadOptions(), ledger->family(format::kMetaFamily),
               rocksdb::Slice(format::kHeadKey.data(), format::kHeadKey.size()), &value);
  if (s.ok()) {
    if (value.size() != 8 + format::kHashSize + 8)
      return Status::corruption("ledger head is malformed");
    ledger->head_.seq = format::decodeU64(value);
    std::memcpy(ledger->head_.hash.data(), value.data() + 8, format::kHashSize);
    ledger->head_.timeNs = static_cast<std::int64_t>(
        format::decodeU64(std::string_view(value).substr(8 + format::kHashSize)));
  } else if (!s.IsNotFound()) {
    return fromRocks(s, "reading ledger head");
  }
  *out = std::move(ledger);
  return Status::ok();
}

Ledger::~Ledger() {
  if (db_ && families_) {
    for (auto* h : families_->handles) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  if (db_) db_->Close().PermitUncheckedError();
}

namespace {

// A ProjectedRecord's first segment: a larger one would change the bytes of
// large records, which equal ingests compare.
constexpr std::size_t kProjectedRecordFirstSegmentWords = 512;

// Builds the ProjectedRecord for a header and Projection bytes in `message`.
// The bytes come from a heap string, word-aligned in practice, and are read
// where they lie instead of copied to an aligned buffer allocated per record.
void fillProjectedRecord(ScratchMessage& message, const Record& header,
                         std::string_view projectionBytes, AlignedBuffer& buffer) {
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
    root.setObject(reader.getRoot<schema::Projection>());
  } else {
    root.initObject().getBody().setOther();
  }
}

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
  std::size_t reserve = 4096;
  for (const PendingRecord& p : batch) {
    reserve += p.objectJson.size() + p.projection.size() + 640;  // + keys, headers
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
  Record record;
  Sha256 chain;
  RecordEncoder encoder;
  // Each record's messages go into the batch in parts, as they lie: per
  // record on the writing thread, a fresh builder, its flat array and a copy
  // into a string were a tenth of it.
  ScratchMessage projected(kProjectedRecordFirstSegmentWords);
  std::vector<rocksdb::Slice> logValue, projectedValue;
  AlignedBuffer projectionBuffer;
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
      wb.Put(logCf, rocksdb::SliceParts(&keySlice, 1),
             rocksdb::SliceParts(logValue.data(), static_cast<int>(logValue.size())));
      fillProjectedRecord(projected, record, p.projection, projectionBuffer);
      projectedValue.clear();
      appendSlices(projected.parts(), projectedValue);
      wb.Put(projCf, rocksdb::SliceParts(&keySlice, 1),
             rocksdb::SliceParts(projectedValue.data(), static_cast<int>(projectedValue.size())));
      wb.Put(timeCf, format::timeKey(record.timeNs, record.seq), rocksdb::Slice());
      if (!p.dedupeKey.empty()) wb.Put(eventsCf, p.dedupeKey, key);
      if (result->firstSeq == 0) result->firstSeq = record.seq;
      result->lastSeq = record.seq;
    }
  } catch (const kj::Exception& e) {
    return Status::invalidArgument(std::string("projection bytes do not decode: ") +
                                   e.getDescription().cStr());
  }
  // The live view: each object's last change in the batch, once. A batch
  // changes each object about 2.5 times (the simulated cluster: 2,000 of 5,000
  // records), and every write is an insert at a random place in the live
  // family's memtable; the batch commits as a whole, so what a reader sees is
  // the same.
  std::unordered_set<std::string> liveWritten;
  liveWritten.reserve(batch.size());
  for (auto p = batch.rbegin(); p != batch.rend(); ++p) {
    const auto [at, first] = liveWritten.insert(p->identity.objectKey());
    if (!first) continue;
    const std::string& objectKey = *at;
    if (p->type == EventType::kDeleted) {
      wb.Delete(liveCf, objectKey);
    } else {
      wb.Put(liveCf, objectKey, p->identity.uid + '\0' + p->identity.resourceVersion);
    }
  }
  for (const auto& [source, c] : cursors) {
    wb.Put(metaCf, std::string(format::kCursorPrefix) + source, encodeCursor(c));
  }
  wb.Put(metaCf, rocksdb::Slice(format::kHeadKey.data(), format::kHeadKey.size()),
         encodeHead(head.seq, head.hash, head.timeNs));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  auto s = db_->Write(wo, &wb);
  if (!s.ok()) return fromRocks(s, "appending to ledger");
  head_ = head;
  return Status::ok();
}

Status Ledger::read(std::uint64_t seq, Record* out) const {
  std::string value;
  auto s =
      db_->Get(rocksdb::ReadOptions(), family(format::kLogFamily), format::seqKey(seq), &value);
  if (!s.ok()) return fromRocks(s, "reading seq " + std::to_string(seq));
  if (value.size() < format::kHashSize)
    return Status::corruption("seq " + std::to_string(seq) + " is truncated");
  return decodeRecord(std::string_view(value).substr(format::kHashSize), out);
}

Status Ledger::scanRecords(std::uint64_t from, std::uint64_t to,
                           const std::function<bool(const Record&, const Digest&)>& fn) const {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, family(format::kLogFamily)));
  Record record;
  Digest stored{};
  for (it->Seek(format::seqKey(from)); it->Valid(); it->Next()) {
    const std::uint64_t seq = format::decodeU64(it->key().ToStringView());
    if (to != 0 && seq > to) break;
    auto value = it->value().ToStringView();
    if (value.size() < format::kHashSize) {
      return Status::corruption("seq " + std::to_string(seq) + ": record is truncated");
    }
    std::memcpy(stored.data(), value.data(), format::kHashSize);
    Status st = decodeRecord(value.substr(format::kHashSize), &record);
    if (!st.isOk()) return Status::corruption("seq " + std::to_string(seq) + ": " + st.message());
    if (!fn(record, stored)) return Status::ok();
  }
  return fromRocks(it->status(), "scanning log");
}

namespace {
constexpr std::uint64_t kShortScanRecords = 50000;
}  // namespace

Status Ledger::scanProjectionWords(
    std::uint64_t from, std::uint64_t to,
    const std::function<bool(std::uint64_t, kj::ArrayPtr<const capnp::word>)>& fn) const {
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

Status Ledger::seqAtOrBefore(std::int64_t timeNs, std::uint64_t* seq) const {
  *seq = 0;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kTimeIndexFamily)));
  it->SeekForPrev(format::timeKey(timeNs, UINT64_MAX));
  if (it->Valid()) *seq = format::seqFromTimeKey(it->key().ToStringView());
  return fromRocks(it->status(), "seeking time index");
}

Status Ledger::timeOf(std::uint64_t seq, std::int64_t* timeNs) const {
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
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), family(format::kEventsFamily),
                    rocksdb::Slice(dedupeKey.data(), dedupeKey.size()), &value);
  *found = s.ok();
  if (s.ok() || s.IsNotFound()) return Status::ok();
  return fromRocks(s, "looking up event");
}

Status Ledger::liveObject(std::string_view objectKey, LiveObject* out) const {
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), family(format::kLiveFamily),
                    rocksdb::Slice(objectKey.data(), objectKey.size()), &value);
  if (!s.ok()) return fromRocks(s, "looking up object");
  auto nul = value.find('\0');
  out->uid = value.substr(0, nul);
  out->resourceVersion = nul == std::string::npos ? "" : value.substr(nul + 1);
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
    auto value = it->value().ToStringView();
    auto nul = value.find('\0');
    obj.uid = std::string(value.substr(0, nul));
    obj.resourceVersion = nul == std::string_view::npos ? "" : std::string(value.substr(nul + 1));
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

Status Ledger::putCheckpoint(std::uint64_t seq, std::string_view bytes,
                             const std::vector<std::string>& chunks) {
  if (chunks.size() > UINT32_MAX) return Status::invalidArgument("putCheckpoint: too many chunks");
  rocksdb::WriteBatch wb;
  // One batch: a checkpoint is never stored without the chunks it names.
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const std::string header = chunkHeader(chunks[i]);
    const rocksdb::Slice parts[] = {header, chunks[i]};
    const std::string key = format::checkpointChunkKey(seq, static_cast<std::uint32_t>(i));
    const rocksdb::Slice keyPart(key);
    wb.Put(family(format::kCheckpointObjectsFamily), rocksdb::SliceParts(&keyPart, 1),
           rocksdb::SliceParts(parts, 2));
  }
  wb.Put(family(format::kCheckpointsFamily), format::seqKey(seq),
         rocksdb::Slice(bytes.data(), bytes.size()));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return fromRocks(db_->Write(wo, &wb), "writing checkpoint");
}

Status Ledger::readCheckpointChunks(
    const std::vector<CheckpointChunkId>& ids,
    const std::function<void(std::size_t, kj::ArrayPtr<const capnp::word>)>& fn) const {
  for (std::size_t i = 1; i < ids.size(); ++i) {
    if (!(ids[i - 1] < ids[i])) {
      return Status::invalidArgument("readCheckpointChunks: ids must ascend");
    }
  }
  if (ids.empty()) return Status::ok();
  auto* cf = family(format::kCheckpointObjectsFamily);
  if (cf == nullptr) return Status::notFound("ledger has no checkpoint chunks (format 1)");
  AlignedBuffer buffer;
  return lookUpSorted(
      *db_, cf, ids.size(), 64,
      [&](std::size_t i) { return format::checkpointChunkKey(ids[i].checkpointSeq, ids[i].chunk); },
      [&](std::size_t i, const rocksdb::Status& found, std::string_view value) {
        const std::string what = "checkpoint chunk " + std::to_string(ids[i].checkpointSeq) + "/" +
                                 std::to_string(ids[i].chunk);
        if (found.IsNotFound()) return Status::notFound(what + " is missing");
        if (!found.ok()) return fromRocks(found, "reading " + what);
        if (value.size() < format::kChunkHeaderSize || value.size() % sizeof(capnp::word) != 0) {
          return Status::corruption(what + " is not a whole number of words");
        }
        const std::string_view payload = value.substr(format::kChunkHeaderSize);
        if (chunkHeader(payload) != value.substr(0, format::kChunkHeaderSize)) {
          return Status::corruption(what + " fails its checksum");
        }
        try {
          fn(i, buffer.load(payload));
        } catch (const kj::Exception& e) {
          return Status::corruption(what + " does not decode: " + e.getDescription().cStr());
        }
        return Status::ok();
      });
}

Status Ledger::checkpointAtOrBefore(std::uint64_t seq, std::uint64_t* foundSeq,
                                    std::string* bytes) const {
  *foundSeq = 0;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kCheckpointsFamily)));
  it->SeekForPrev(format::seqKey(seq));
  if (it->Valid()) {
    *foundSeq = format::decodeU64(it->key().ToStringView());
    bytes->assign(it->value().data(), it->value().size());
  }
  return fromRocks(it->status(), "seeking checkpoint");
}

Status Ledger::scanCheckpoints(
    const std::function<bool(std::uint64_t, std::string_view)>& fn) const {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kCheckpointsFamily)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!fn(format::decodeU64(it->key().ToStringView()), it->value().ToStringView())) break;
  }
  return fromRocks(it->status(), "scanning checkpoints");
}

Status Ledger::dropCheckpoints() {
  rocksdb::WriteBatch wb;
  wb.DeleteRange(family(format::kCheckpointsFamily), format::seqKey(0), format::seqKey(UINT64_MAX));
  if (auto* chunks = family(format::kCheckpointObjectsFamily); chunks != nullptr) {
    wb.DeleteRange(chunks, format::seqKey(0), format::checkpointChunkKey(UINT64_MAX, UINT32_MAX));
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return fromRocks(db_->Write(wo, &wb), "dropping checkpoints");
}

Status Ledger::compact(const std::string& familyName) {
  if (options_.readOnly) return Status::invalidArgument("compact: the ledger is open read-only");
  rocksdb::CompactRangeOptions co;
  // The bottom level too: that is where a full ledger keeps nearly everything.
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  bool found = false;
  for (const char* name : kFamilyNames) {
    if (!familyName.empty() && familyName != name) continue;
    if (family(name) == nullptr) continue;
    found = true;
    if (Status st = fromRocks(db_->CompactRange(co, family(name), nullptr, nullptr),
                              std::string("compacting ") + name);
        !st.isOk())
      return st;
  }
  if (!found) return Status::invalidArgument("no column family " + familyName);
  return Status::ok();
}

Status Ledger::rebuildProjection(const std::function<std::string(const Record&)>& project,
                                 std::uint64_t* rewritten) {
  *rewritten = 0;
  rocksdb::WriteBatch wb;
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  auto* projCf = family(format::kProjectionFamily);
  Status inner = Status::ok();
  Status st = scanRecords(1, 0, [&](const Record& r, const Digest&) {
    wb.Put(projCf, format::seqKey(r.seq), buildProjectedRecord(r, project(r)));
    ++*rewritten;
    if (wb.Count() >= 1024) {
      inner = fromRocks(db_->Write(wo, &wb), "rewriting projection");
      wb.Clear();
      if (!inner.isOk()) return false;
    }
    return true;
  });
  if (!st.isOk()) return st;
  if (!inner.isOk()) return inner;
  return fromRocks(db_->Write(wo, &wb), "rewriting projection");
}

Status Ledger::putRawForTesting(const char* familyName, std::string_view key,
                                std::string_view value) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return fromRocks(db_->Put(wo, family(familyName), rocksdb::Slice(key.data(), key.size()),
                            rocksdb::Slice(value.data(), value.size())),
                   "raw put");
}

Status Ledger::getRaw(const char* familyName, std::string_view key, std::string* value) const {
  return fromRocks(db_->Get(rocksdb::ReadOptions(), family(familyName),
                            rocksdb::Slice(key.data(), key.size()), value),
                   "raw get");
}

std::map<std::string, std::uint64_t> Ledger::diskUsage() const {
  std::map<std::string, std::uint64_t> usage;
  std::uint64_t total = 0;
  for (const auto& [name, handle] : families_->byName) {
    std::string v;
    std::uint64_t bytes = 0;
    if (db_->GetProperty(handle, "rocksdb.total-sst-files-size", &v)) bytes = std::stoull(v);
    usage[name] = bytes;
    total += bytes;
  }
  rocksdb::VectorLogPtr logs;
  if (db_->GetSortedWalFiles(logs).ok()) {
    std::uint64_t wal = 0;
    for (const auto& log : logs) {
      if (log->Type() == rocksdb::kAliveLogFile) wal += log->SizeFileBytes();
    }
    usage["wal"] = wal;
    total += wal;
  }
  usage["total"] = total;
  return usage;
}

}  // namespace ledger
