// A large commit's log records written as one table file and ingested into
// the `log` family, instead of through the write-ahead log and a memtable.
//
// Why: on a bulk ingest the log records are most of the bytes a commit
// writes (the stored JSON of every event). Through the write-ahead log each
// byte was copied into the batch, checksummed (RocksDB's CRC32C, which
// Debian's portable build computes in software), copied into the log file and
// into the memtable, and later compressed by a flush: a large share of the
// writing thread (docs/performance.md). Sequence numbers ascend, so a commit's
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
// Ownership: a LogTable borrows the database and the family handle (both
// must outlive it) and owns its staging file until ingest() hands it to
// RocksDB; destroying an unfinished LogTable deletes the file.
// Thread safety: none; one per append.
// Errors: Status values (the storage layer's model).
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ledger/status.h"

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
  // Adds one record; keys must ascend. The value is the concatenation of
  // `valueParts`.
  [[nodiscard]] Status add(std::string_view key, std::span<const rocksdb::Slice> valueParts);
  // Finishes the file and ingests it into the family, atomically: afterwards
  // the records are in the database (and on disk: RocksDB syncs an ingested
  // file and its manifest entry), or nothing changed.
  [[nodiscard]] Status ingest();

  // The directory staging files are written in, under a ledger directory.
  static std::string stagingDirectory(const std::string& ledgerDir);

 private:
  void discard();

  rocksdb::DB& db_;
  rocksdb::ColumnFamilyHandle* family_;
  const rocksdb::Options& options_;
  std::string stagingDir_;
  std::string path_;
  std::unique_ptr<rocksdb::SstFileWriter> writer_;
  std::string value_;  // one record's value, joined from its parts
};

}  // namespace ledger
