#include "log_table.h"

#include <filesystem>
#include <system_error>

#include "ledger_internal.h"

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
  if (!st.isOk()) {
    discard();
    return st;
  }
  closed_ = false;
  buildStatus_ = Status::ok();
  builder_ = std::thread([this] { build(); });
  return Status::ok();
}

void LogTable::add(std::string_view key, std::span<const rocksdb::Slice> valueParts) {
  std::string value;
  std::size_t size = 0;
  for (const rocksdb::Slice& part : valueParts) size += part.size();
  value.reserve(size);
  for (const rocksdb::Slice& part : valueParts) value.append(part.data(), part.size());
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    wake = queued_.empty();
    queued_.emplace_back(std::string(key), std::move(value));
  }
  if (wake) ready_.notify_one();
}

void LogTable::build() {
  std::vector<Entry> taken;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return !queued_.empty() || closed_; });
      if (queued_.empty()) return;  // closed, and everything written
      taken.swap(queued_);
    }
    for (const Entry& e : taken) {
      if (!buildStatus_.isOk()) break;  // keep draining; the first error stands
      buildStatus_ = fromRocks(writer_->Put(e.first, e.second), "writing log table " + path_);
    }
    taken.clear();
  }
}

void LogTable::stop() {
  if (!builder_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  ready_.notify_one();
  builder_.join();
}

Status LogTable::ingest() {
  stop();
  Status st = buildStatus_;
  if (st.isOk()) st = fromRocks(writer_->Finish(), "finishing log table " + path_);
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
  stop();
  writer_.reset();
  queued_.clear();
  if (!path_.empty()) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);  // absent once ingested: nothing to do
    path_.clear();
  }
}

}  // namespace ledger
