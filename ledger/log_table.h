// A large commit's log records written as one table file and ingested into
// the `log` family, instead of through the write-ahead log and a memtable.
//
// Why: on a bulk ingest the log records are most of the bytes a commit
// writes (the stored JSON of every event). Through the write-ahead log each
// byte was copied into the batch, checksummed (RocksDB's CRC32C, which
// Debian's portable build computes in software), copied into the log file and
// into the memtable, and later compressed by a flush: on 1M generated events
// about a third of the writing thread. Sequence numbers ascend, so a commit's
// records are already a sorted table: written once, compressed once, and
// ingested below everything else (no key overlaps), they are never compacted
// either.
//
// The commit rule this relies on (format.h): the `head` in `meta` is the
// commit point. Ledger::append ingests the table first and then writes the
// batch that moves the head (with every other family's keys); a crash
// between the two leaves log records past the head, which readers ignore and
// the next writable open deletes.
//
// The table is built on a thread of its own, which compresses each block
// while the appending thread goes on encoding and hashing the next records:
// on the appending thread the compression took back most of what the
// write-ahead log had cost it.
//
// Ownership: a LogTable borrows the database and the family handle (both
// must outlive it), owns its staging file until ingest() hands it to
// RocksDB, and owns its building thread; destroying an unfinished LogTable
// stops the thread and deletes the file.
// Thread safety: one appending thread calls start, add and ingest.
// Errors: Status values (the storage layer's model).
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "status.h"

namespace ledger {

class LogTable {
 public:
  // `options` are the log family's (compression, table format), as the
  // database opened it; `stagingDir` is a directory on the ledger's file
  // system (RocksDB links the file in rather than copying it).
  LogTable(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* logFamily, const rocksdb::Options& options,
           std::string stagingDir);
  ~LogTable();
  LogTable(const LogTable&) = delete;
  LogTable& operator=(const LogTable&) = delete;

  // Starts the file for a commit whose first record is `firstSeq`.
  [[nodiscard]] Status start(std::uint64_t firstSeq);
  // Adds one record (copied); keys must ascend. The value is the
  // concatenation of `valueParts`. A failure of the building thread shows in
  // ingest().
  void add(std::string_view key, std::span<const rocksdb::Slice> valueParts);
  // Finishes the file and ingests it into the family, atomically: afterwards
  // the records are in the database (and on disk: RocksDB syncs an ingested
  // file and its manifest entry), or nothing changed.
  [[nodiscard]] Status ingest();

  // The directory staging files are written in, under a ledger directory.
  static std::string stagingDirectory(const std::string& ledgerDir);

 private:
  using Entry = std::pair<std::string, std::string>;  // key, value

  void build();  // the building thread: writes entries as they come
  void stop();   // ends and joins the building thread
  void discard();

  rocksdb::DB& db_;
  rocksdb::ColumnFamilyHandle* family_;
  const rocksdb::Options& options_;
  std::string stagingDir_;
  std::string path_;
  std::unique_ptr<rocksdb::SstFileWriter> writer_;

  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<Entry> queued_;  // guarded by mutex_
  bool closed_ = false;        // guarded by mutex_: no more entries
  Status buildStatus_;         // the building thread's; read after it joined
  std::thread builder_;
};

}  // namespace ledger
