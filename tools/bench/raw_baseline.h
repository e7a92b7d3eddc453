// The baselines the ledger is measured against, side by side on the same
// machine and input:
// - rawWrite: the stream's JSON bytes, one value per line, written into a
//   fresh RocksDB keyed by sequence number with the ledger's own options
//   (ledger/ledger.cpp: its DBOptions and the `log` family's ZSTD table
//   options), in batches of the same size, WAL on and not synced: a plain
//   RocksDB write of the same bytes, with no parsing, projecting, hashing or
//   indexes. The targets compare the ingest with this.
// - rawTableWrite: the same bytes as table files, for reference (below).
// - directory sizes, for stored-bytes comparisons.
//
// Ownership: opens and closes its own database. Thread safety: none.
// Errors: throws std::runtime_error when RocksDB or the file fails.
#pragma once

#include <cstdint>
#include <string>

#include "tools/bench/child.h"

namespace ledger::bench {

// Metrics: records, bytes (JSON, without newlines), seconds (read + write,
// up to the last batch committed; the final memtable flush is not timed,
// as for the ledger), cpuSeconds (all threads, same span), dbBytes
// (directory size after a flush).
Metrics rawWrite(const std::string& jsonlPath, const std::string& dbDir, std::size_t batch);

// The same bytes written the way the ledger writes a large commit's log
// records, by the same code (ledger/internal/log_table.h): each batch as a table file
// built with the same options and ingested, no write-ahead log or memtable. Not the
// baseline the targets name; printed beside it so a reader sees how much of
// the ledger's ingest speed is that mechanism. Metrics as rawWrite.
Metrics rawTableWrite(const std::string& jsonlPath, const std::string& dbDir, std::size_t batch);

// Bytes of every regular file under `dir`.
std::uint64_t directoryBytes(const std::string& dir);

}  // namespace ledger::bench
