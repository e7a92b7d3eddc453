#include "tools/bench/raw_baseline.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <stdexcept>

#include "ledger/format.h"
#include "ledger/ledger.h"

namespace ledger::bench {

namespace {

void check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.ToString());
}

// Mirrors ledger.cpp's open(): the same DBOptions, and the `log` family's
// column family options, where the ledger keeps the JSON.
rocksdb::Options ledgerLikeOptions() {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.keep_log_file_num = 2;
  o.max_background_jobs = 2;
  o.paranoid_checks = true;
  o.max_total_wal_size = kMaxTotalWalBytes;  // no effect with one family
  o.compression = rocksdb::kZSTD;
  o.bottommost_compression = rocksdb::kZSTD;
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 64 * 1024;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return o;
}

// Calls put(data, size) for each non-empty line of the file, in order.
template <typename Put>
void forEachLine(const std::string& jsonlPath, Put&& put) {
  std::ifstream in(jsonlPath, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + jsonlPath);
  std::string buffer(1 << 20, '\0');
  std::string carry;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    std::size_t pos = 0;
    while (pos < got) {
      const char* nl = static_cast<const char*>(std::memchr(buffer.data() + pos, '\n', got - pos));
      const std::size_t end = nl ? static_cast<std::size_t>(nl - buffer.data()) : got;
      if (!carry.empty() || nl == nullptr) {
        carry.append(buffer.data() + pos, end - pos);
        if (nl != nullptr) {
          if (!carry.empty()) put(carry.data(), carry.size());
          carry.clear();
        }
      } else if (end > pos) {
        put(buffer.data() + pos, end - pos);
      }
      pos = end + 1;
    }
  }
  if (!carry.empty()) put(carry.data(), carry.size());
}

std::unique_ptr<rocksdb::DB> openFresh(const std::string& dbDir) {
  std::filesystem::remove_all(dbDir);
  rocksdb::DB* raw = nullptr;
  check(rocksdb::DB::Open(ledgerLikeOptions(), dbDir, &raw), "opening raw baseline");
  return std::unique_ptr<rocksdb::DB>(raw);
}

Metrics finish(std::unique_ptr<rocksdb::DB> db, const std::string& dbDir, std::uint64_t records,
               std::uint64_t bytes, double seconds, double cpu) {
  check(db->Flush(rocksdb::FlushOptions()), "raw flush");
  check(db->Close(), "raw close");
  db.reset();
  return {{"records", static_cast<double>(records)},
          {"bytes", static_cast<double>(bytes)},
          {"seconds", seconds},
          {"cpuSeconds", cpu},
          {"dbBytes", static_cast<double>(directoryBytes(dbDir))}};
}

}  // namespace

Metrics rawWrite(const std::string& jsonlPath, const std::string& dbDir, std::size_t batch) {
  std::unique_ptr<rocksdb::DB> db = openFresh(dbDir);
  rocksdb::WriteOptions wo;
  wo.sync = false;
  rocksdb::WriteBatch wb;
  std::uint64_t seq = 0, bytes = 0;
  const double start = nowSeconds();
  const double cpuStart = cpuSeconds();
  forEachLine(jsonlPath, [&](const char* data, std::size_t size) {
    ++seq;
    bytes += size;
    wb.Put(format::seqKey(seq), rocksdb::Slice(data, size));
    if (wb.Count() >= batch) {
      check(db->Write(wo, &wb), "raw write");
      wb.Clear();
    }
  });
  if (wb.Count() > 0) check(db->Write(wo, &wb), "raw write");
  const double seconds = nowSeconds() - start;
  const double cpu = cpuSeconds() - cpuStart;
  return finish(std::move(db), dbDir, seq, bytes, seconds, cpu);
}

Metrics rawTableWrite(const std::string& jsonlPath, const std::string& dbDir, std::size_t batch) {
  std::unique_ptr<rocksdb::DB> db = openFresh(dbDir);
  const rocksdb::Options options = ledgerLikeOptions();
  // RocksDB's own table writer, as the ledger writes a large commit's log
  // records: one sorted table per batch, moved in by IngestExternalFile with
  // no global seqno rewrite and the page cache left alone (the ledger's
  // reasons are in its log table writer).
  const std::string staging = (std::filesystem::path(dbDir) / "staging").string();
  std::filesystem::create_directories(staging);
  std::unique_ptr<rocksdb::SstFileWriter> writer;
  std::string path;
  std::size_t inTable = 0;
  std::uint64_t seq = 0, bytes = 0;
  auto ingest = [&] {
    check(writer->Finish(), "raw table finish");
    rocksdb::IngestExternalFileOptions io;
    io.move_files = true;
    io.write_global_seqno = false;
    check(db->IngestExternalFile(db->DefaultColumnFamily(), {path}, io), "raw table ingest");
    writer.reset();
    inTable = 0;
  };
  const double start = nowSeconds();
  const double cpuStart = cpuSeconds();
  forEachLine(jsonlPath, [&](const char* data, std::size_t size) {
    ++seq;
    bytes += size;
    if (!writer) {
      path = (std::filesystem::path(staging) / ("log-" + std::to_string(seq) + ".sst")).string();
      writer = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(), options,
                                                        db->DefaultColumnFamily(),
                                                        /*invalidate_page_cache=*/false);
      check(writer->Open(path), "raw table open");
    }
    check(writer->Put(format::seqKey(seq), rocksdb::Slice(data, size)), "raw table put");
    if (++inTable >= batch) ingest();
  });
  if (writer) ingest();
  const double seconds = nowSeconds() - start;
  const double cpu = cpuSeconds() - cpuStart;
  return finish(std::move(db), dbDir, seq, bytes, seconds, cpu);
}

std::uint64_t directoryBytes(const std::string& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

}  // namespace ledger::bench
