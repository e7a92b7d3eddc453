#include "ledger/ledger.h"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <system_error>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/internal/log_table.h"
#include "ledger/internal/record_delta.h"

namespace ledger {

namespace {

// A dictionary per table file, sampled from the file's own blocks when a
// flush, a compaction or a large commit (ledger/internal/log_table.h) writes
// it, and stored in the file: successive versions of one object, and objects
// of one kind, share most of their JSON, which a block compressed alone
// cannot exploit. The samples are the dictionary as they are: zstd's trainer
// stored a few percent less but ran on the writing thread for every large
// commit and made ingest much slower. Readers need no option: a table file
// names its dictionary, and files without one stay readable, so this is not a
// format change (docs/performance.md).
void useDictionary(rocksdb::ColumnFamilyOptions& cf) {
  constexpr std::uint32_t kDictBytes = 64 * 1024;
  for (rocksdb::CompressionOptions* opts :
       {&cf.compression_opts, &cf.bottommost_compression_opts}) {
    opts->max_dict_bytes = kDictBytes;
    opts->zstd_max_train_bytes = 0;
    // Bounds the blocks a writer buffers before it samples them: without a
    // bound a compaction holds its whole output file in memory.
    opts->max_dict_buffer_bytes = 16 * 1024 * 1024;
  }
  cf.bottommost_compression_opts.enabled = true;
}

}  // namespace

rocksdb::ColumnFamilyOptions familyOptions(const std::string& name, bool writable) {
  rocksdb::ColumnFamilyOptions cf;
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 32 * 1024;
  if (name == format::kLogFamily) {
    // Raw JSON compresses well; it is read rarely (verify, export).
    cf.compression = rocksdb::kZSTD;
    cf.bottommost_compression = rocksdb::kZSTD;
    table.block_size = 64 * 1024;
    useDictionary(cf);
  } else if (name == format::kProjectionFamily) {
    // Replays scan it and point-in-time queries look up a couple of thousand
    // records scattered over the whole history, one block each: zstd's
    // decompression was half of a query's CPU. LZ4 at every level stores
    // about a third more here, a small share of the ledger, and halves query
    // time (docs/performance.md). A dictionary keeps LZ4's speed and stores
    // a quarter less.
    cf.compression = rocksdb::kLZ4Compression;
    cf.bottommost_compression = rocksdb::kLZ4Compression;
    useDictionary(cf);
  } else if (name == format::kCheckpointsFamily) {
    // Every point-in-time query reads one checkpoint (about 70 bytes per
    // live object) before it can start reading the objects: zstd at the
    // bottom made that read about twice as slow as LZ4, which stores more
    // but a small share of the ledger.
    cf.compression = rocksdb::kLZ4Compression;
    cf.bottommost_compression = rocksdb::kLZ4Compression;
  } else if (name == format::kCheckpointObjectsFamily) {
    // Read by every point-in-time query, a chunk or two per block.
    cf.compression = rocksdb::kLZ4Compression;
    cf.bottommost_compression = rocksdb::kLZ4Compression;
    useDictionary(cf);
  } else {
    cf.compression = rocksdb::kLZ4Compression;
  }
  if (name == format::kEventsFamily || name == format::kLiveFamily) {
    // Ingest looks up every event's dedupe key, and almost all are absent:
    // a Bloom filter answers those without reading a block from each level.
    // Older table files without filters stay readable (no format change).
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  }
  if (name == format::kEventsFamily && writable) {
    // The same for the memtable, where each absent key was searched for in
    // the skip list, a visible share of the writing thread. The filter is
    // 2% of the memtable. A reader looks up no dedupe keys, and RocksDB
    // would allocate and clear the filter (1.3 MB) on every read-only open:
    // fresh memory a command-line question pays for in page faults.
    cf.memtable_prefix_bloom_size_ratio = 0.02;
    cf.memtable_whole_key_filtering = true;
  }
  if (name == format::kObjectIndexFamily && writable) {
    // A writer only adds to the index, a key or two per record, keys that
    // share long prefixes (group/kind/namespace) and land all over the
    // family: each insert into a skip list walked its levels through memory
    // no cache holds, and on a bulk ingest that was most of what the index
    // cost the writing thread (docs/performance.md). A vector takes them in
    // arrival order and sorts once, when a flush (a background thread)
    // writes the table. Reads in a writing process stay correct, at the
    // price of sorting a copy of the live memtable per iterator; no command
    // that writes reads the index while it writes. Readers open with the
    // skip list: the memtable is not part of the format.
    cf.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  }
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return cf;
}

rocksdb::ColumnFamilyHandle* Ledger::family(const char* name) const {
  auto it = families_->byName.find(std::string_view(name));
  return it == families_->byName.end() ? nullptr : it->second;
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
  // result, so a query just after a bulk ingest paid for the whole log
  // many times over its own cost. Flushed here, once
  // (RocksDB skips families whose memtables are empty). A failure loses
  // nothing: the log still holds the data and the next writable open replays
  // it.
  if (db_ && families_ && !options_.readOnly) {
    rocksdb::FlushOptions fo;
    fo.wait = true;
    const bool flushed = db_->Flush(fo, families_->handles).ok();
    // Without sync, commits are acknowledged to no one until they are in
    // table files; once flushed, the head is durable and may be named.
    if (flushed && !options_.sync && headFd_ >= 0) {
      // A failure leaves an older head named: that loses nothing.
      static_cast<void>(writeAcknowledgedHead());
    }
  }
  if (headFd_ >= 0) ::close(headFd_);
  if (db_ && families_) {
    for (auto* h : families_->handles) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  if (db_) db_->Close().PermitUncheckedError();
}

Status Ledger::resume() {
  if (options_.readOnly) return Status::invalidArgument("resume: the ledger is open read-only");
  return fromRocks(db_->Resume(), "resuming writes to ledger " + dir_);
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
  if (std::string_view(familyName) == format::kEventsFamily &&
      key.starts_with(format::kLegacyEventKeyPrefix)) {
    legacyEventKeys_.store(true, std::memory_order_release);
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return fromRocks(db_->Put(wo, family(familyName), rocksdb::Slice(key.data(), key.size()),
                            rocksdb::Slice(value.data(), value.size())),
                   "raw put");
}

Status Ledger::deleteRawForTesting(const char* familyName, std::string_view key) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return fromRocks(db_->Delete(wo, family(familyName), rocksdb::Slice(key.data(), key.size())),
                   "raw delete");
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
