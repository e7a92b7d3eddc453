#include "ledger/internal/log_table.h"

#include <filesystem>
#include <system_error>

#include "ledger/internal/ledger_internal.h"

namespace ledger {

LogTable::LogTable(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* logFamily,
                   const rocksdb::Options& options, std::string stagingDir)
    : db_(db), family_(logFamily), options_(options), stagingDir_(std::move(stagingDir)) {}

LogTable::~LogTable() { discard(); }

std::string LogTable::stagingDirectory(const std::string& ledgerDir) {
  return (std::filesystem::path(ledgerDir) / "staging").string();
}

Status LogTable::start(std::uint64_t firstSeq) {
  discard();
  std::error_code ec;
  std::filesystem::create_directories(stagingDir_, ec);
  if (ec) return Status::ioError("creating " + stagingDir_ + ": " + ec.message());
  path_ =
      (std::filesystem::path(stagingDir_) / ("log-" + std::to_string(firstSeq) + ".sst")).string();
  // The file is read back soon (by verify, export) or never: leave the page
  // cache alone rather than dropping the pages as SstFileWriter does by
  // default.
  writer_ = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(), options_, family_,
                                                     /*invalidate_page_cache=*/false);
  Status st = fromRocks(writer_->Open(path_), "starting log table " + path_);
  if (!st.isOk()) discard();
  return st;
}

Status LogTable::add(std::string_view key, std::span<const rocksdb::Slice> valueParts) {
  value_.clear();
  for (const rocksdb::Slice& part : valueParts) value_.append(part.data(), part.size());
  return fromRocks(writer_->Put(rocksdb::Slice(key.data(), key.size()), value_),
                   "writing log table " + path_);
}

Status LogTable::ingest() {
  Status st = fromRocks(writer_->Finish(), "finishing log table " + path_);
  if (st.isOk()) {
    rocksdb::IngestExternalFileOptions io;
    // Linked in, not copied; RocksDB removes the staging name once it is in.
    io.move_files = true;
    // The file's sequence number lives in the manifest; rewriting it into the
    // file would cost a write and a sync per commit for nothing a reader of
    // this RocksDB version needs.
    io.write_global_seqno = false;
    st = fromRocks(db_.IngestExternalFile(family_, {path_}, io), "ingesting log table " + path_);
  }
  discard();
  return st;
}

void LogTable::discard() {
  writer_.reset();
  if (!path_.empty()) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);  // absent once ingested: nothing to do
    path_.clear();
  }
}

}  // namespace ledger
