#include "ledger.h"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "format.h"
#include "ledger_internal.h"
#include "log_table.h"

namespace ledger {

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

namespace {

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

}  // namespace

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
  ledger->families_->logTableOptions = rocksdb::Options(dbo, familyOptions(format::kLogFamily));

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
  ledger->committedSeq_.store(ledger->head_.seq, std::memory_order_release);
  if (!options.readOnly) {
    if (Status st = ledger->dropUncommittedLog(); !st.isOk()) return st;
  }
  *out = std::move(ledger);
  return Status::ok();
}

Status Ledger::dropUncommittedLog() {
  // A commit that wrote its log records as a table file (log_table.h) and
  // stopped before the batch that moves the head: those records were never
  // committed. The next commit numbers its records from the head again.
  rocksdb::WriteBatch wb;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kLogFamily)));
  for (it->Seek(format::seqKey(head_.seq + 1)); it->Valid(); it->Next()) {
    wb.Delete(family(format::kLogFamily), it->key());
  }
  if (Status st = fromRocks(it->status(), "reading the log past its head"); !st.isOk()) return st;
  if (wb.Count() > 0) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    if (Status st = fromRocks(db_->Write(wo, &wb), "removing uncommitted log records"); !st.isOk())
      return st;
  }
  // Staging files of such a commit, never ingested.
  const std::string staging = LogTable::stagingDirectory(dir_);
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);
  if (ec) return Status::ioError("removing " + staging + ": " + ec.message());
  return Status::ok();
}

Ledger::~Ledger() {
  // What the last batches left in memtables lives only in the write-ahead
  // log, and RocksDB does not flush it on close while the log is on. Every
  // later open then replays that log into memory first - a read-only one
  // (ledger-query, ledger-replay) on every run, since it cannot write the
  // result: on 200k generated events just ingested, 139 MB of log made a
  // `ledger-query state` take 0.42 s instead of 0.07 s. Flushed here, once
  // (RocksDB skips families whose memtables are empty). A failure loses
  // nothing: the log still holds the data and the next writable open replays
  // it.
  if (db_ && families_ && !options_.readOnly) {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    db_->Flush(fo, families_->handles).PermitUncheckedError();
  }
  if (db_ && families_) {
    for (auto* h : families_->handles) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  if (db_) db_->Close().PermitUncheckedError();
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
