// Opening a ledger: the checks before RocksDB's open (the directory holds a
// whole database or may take a new one; what a writer acknowledged is still
// in the write-ahead log or tables), the options and column families RocksDB
// opens with, and the checks after it (format version, head, projection
// format, acknowledged head). They run before RocksDB because a writable
// DB::Open changes the store (creates, recovers, deletes the log), and a
// loss found after that could no longer be refused or repaired.
#include "ledger/ledger.h"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "ledger/format.h"
#include "ledger/internal/ledger_directory.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/internal/live_writer.h"
#include "ledger/internal/record_delta.h"

namespace ledger {

namespace {

// A read-only open beside a writer that moved on during it tries again
// (openBesideWriter), 10 ms more apart each time up to 100 ms, until this
// much time has passed since the first try.
constexpr std::chrono::seconds kReaderOpenPatience{10};

// RocksDB's default (-1) opens every table file of every family when the
// ledger opens, with its index and filter blocks: on a large ledger that was
// most of a `ledger-query state` run, many times the query itself, and a
// ledger with more files than the process
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

// RocksDB's info log (the LOG file), written with stdio. RocksDB's own
// (EnvLogger) asserts that nothing is written after a failed write
// (WritableFileWriter, sync_without_flush_called_), and Debian builds it with
// assertions on: on a full disk its first failed line, then any other line
// (the no-space recovery thread logs one) aborted the process. A line lost
// to a full disk loses nothing but the line. As RocksDB does, the previous
// open's log is kept as LOG.old.
class InfoLog : public rocksdb::Logger {
 public:
  explicit InfoLog(const std::string& dir) : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {
    const std::filesystem::path log = std::filesystem::path(dir) / "LOG";
    std::error_code ec;
    std::filesystem::rename(log, std::filesystem::path(dir) / "LOG.old", ec);  // none: fine
    file_ = std::fopen(log.c_str(), "w");
  }
  ~InfoLog() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  using rocksdb::Logger::Logv;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (file_ == nullptr || level < GetInfoLogLevel()) return;
    static constexpr const char* kNames[] = {"DEBUG", "INFO", "WARN", "ERROR", "FATAL", "HEADER"};
    const auto index = static_cast<std::size_t>(level);
    char time[32] = "";
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    if (gmtime_r(&now, &tm) != nullptr) std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%SZ", &tm);
    flockfile(file_);
    std::fprintf(file_, "%s [%s] ", time, index < std::size(kNames) ? kNames[index] : "?");
    std::vfprintf(file_, format, ap);
    std::fputc('\n', file_);
    std::fflush(file_);
    funlockfile(file_);
  }

 private:
  std::FILE* file_ = nullptr;
};

// Leaves a full disk to the writer (Ledger::resume). RocksDB's own recovery
// from a full disk waits until the free space reaches the size of its
// largest write buffer (DBImpl::Open, ReserveDiskBuffer), which a small or
// nearly full volume may never have free again, though freeing what the
// next commit needs would do. Meanwhile it answers DB::Resume with Busy, so
// a writer could neither commit nor clear the error.
class WriterResumesAfterNoSpace : public rocksdb::EventListener {
 public:
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status error,
                            bool* autoRecovery) override {
    if (error.IsNoSpace()) *autoRecovery = false;
  }
};

}  // namespace

Status Ledger::writeAcknowledgedHead() {
  const std::string bytes = encodeAcknowledgedHead(head_.seq, head_.hash, head_.timeNs);
  const std::string what = "recording the acknowledged head in " +
                           (std::filesystem::path(dir_) / format::kAcknowledgedHeadFile).string();
  // 64 bytes at offset 0 of a file of that size: one sector, written in
  // place, so a crash leaves the old bytes or the new ones.
  if (::pwrite(headFd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    return fileError(what, std::error_code(errno ? errno : EIO, std::generic_category()));
  }
  if (::fdatasync(headFd_) != 0) {
    return fileError(what, std::error_code(errno, std::generic_category()));
  }
  return Status::ok();
}

namespace {

// Before a writable open of a ledger whose acknowledged head names records:
// a read-only probe that refuses a store missing some of them.
Status probeBeforeWritableOpen(const std::string& dir, const Ledger::Options& options,
                               const std::optional<AcknowledgedHead>& acknowledged) {
  if (!options.readOnly && acknowledged && acknowledged->seq > 0 &&
      (hasFilled(dir, ".log") || !hasFilled(dir, ".sst"))) {
    // A writable open writes what it recovers from the write-ahead log to
    // table files and deletes the log: a log that lost acknowledged records
    // would be gone before the check below could refuse it, and with it
    // what a repair could still read. Where neither log nor table holds a
    // record, it would start a new log in a store whose records were all
    // lost with the old one. A read-only open recovers in memory only; it
    // checks first. After a clean close the log is empty and tables hold
    // every record.
    Ledger::Options probeOptions = options;
    probeOptions.readOnly = true;
    probeOptions.createIfMissing = false;
    std::unique_ptr<Ledger> probe;
    if (Status st = Ledger::open(dir, probeOptions, &probe); st.isCorruption()) return st;
  }
  return Status::ok();
}

// What a read-only open changes from the writer's options: it reads and
// keeps its open short.
void useReaderOptions(rocksdb::DBOptions* dbo) {
  // A reader runs no compaction, which is all that the table files'
  // statistics serve: RocksDB would read them from up to 20 files on
  // every open.
  dbo->skip_stats_update_on_db_open = true;
  // The few table files RocksDB opens at once (up to 16 per family) are
  // opened on this thread: starting a pool of threads for them on every
  // open of a command-line question cost more than opening them.
  dbo->max_file_opening_threads = 1;
  // That every table file is there is still checked (one directory
  // listing); their sizes, one stat per file, are left to the reads,
  // which check each block's checksum anyway.
  dbo->skip_checking_sst_file_sizes_on_db_open = true;
}

// The DBOptions for a read-only or writable open of `dir`; a writer's
// directory is created here, for its info log. `*pinned`: the table files a
// reader opens with the database, when it opens them all.
Status databaseOptions(const std::string& dir, const Ledger::Options& options, bool exists,
                       rocksdb::DBOptions* out, TableFileReservation* pinned) {
  rocksdb::DBOptions& dbo = *out;
  dbo.create_if_missing = options.createIfMissing && !exists;
  dbo.create_missing_column_families = !options.readOnly;
  dbo.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  if (!options.readOnly) {
    // The log goes in the directory, which a new ledger's DB::Open would
    // create only after the log is opened.
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return fileError("creating " + dir, ec);
    dbo.info_log = std::make_shared<InfoLog>(dir);
    dbo.listeners.push_back(std::make_shared<WriterResumesAfterNoSpace>());
  }
  dbo.keep_log_file_num = 2;
  dbo.max_background_jobs = 2;
  dbo.paranoid_checks = true;
  dbo.max_open_files = maxOpenTableFiles();
  if (options.readOnly) {
    useReaderOptions(&dbo);
    // Beside a live writer, a table file this reader has not opened yet may
    // be deleted by the writer's next compaction (live_writer.h): every one
    // is opened now, and an open descriptor keeps a deleted file readable.
    // Half the descriptors' bound goes to such readers, for the whole
    // process; past it a reader keeps the lazy opens (and may then find a
    // file gone, and say so).
    if (exists && writerHoldsLedger(dir)) {
      *pinned = TableFileReservation::tryReserve(countTableFiles(dir),
                                                 static_cast<std::size_t>(dbo.max_open_files) / 2);
    }
    if (*pinned) {
      dbo.max_open_files = -1;
    }
  }
  dbo.max_total_wal_size = options.maxWalBytes;
  // A vector memtable (object_index, familyOptions) takes no concurrent
  // inserts, and RocksDB refuses to open with them on. The ledger has one
  // appending thread; a cursor or checkpoint written beside it waits its
  // turn in the write queue instead of inserting in parallel.
  if (!options.readOnly) dbo.allow_concurrent_memtable_write = false;
  // Recovery replays the write-ahead log up to an incomplete record at its
  // end and fails on any other damage. The default, kPointInTimeRecovery,
  // stops silently at the first bad record, dropping every commit after it:
  // acknowledged history lost, and its seqs reused by the next commit.
  // kAbsoluteConsistency would also refuse the torn last record a crash
  // leaves mid-write; that record was never acknowledged (with sync on, an
  // append returns only after its whole record is synced), so dropping it
  // loses nothing. A checksum mismatch anywhere is Corruption
  // (rocksdb/options.h, WALRecoveryMode).
  dbo.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  return Status::ok();
}

// The families to open: every one this build knows (`present` null), or (a
// read-only open of an older ledger) those of them `present` lists.
Status describeFamilies(const std::string& dir, bool writable,
                        const std::vector<std::string>* present,
                        std::vector<rocksdb::ColumnFamilyDescriptor>* descriptors) {
  descriptors->clear();
  for (const char* name : kFamilyNames) {
    const bool optional = std::string_view(name) == format::kCheckpointObjectsFamily ||
                          std::string_view(name) == format::kObjectIndexFamily ||
                          std::string_view(name) == format::kUsageRollupsFamily;
    if (present != nullptr && std::find(present->begin(), present->end(), name) == present->end()) {
      if (optional) continue;
      return Status::corruption("ledger " + dir + " has no column family " + name);
    }
    descriptors->emplace_back(name, familyOptions(name, writable));
  }
  return Status::ok();
}

// What a writer acknowledged must still be here, as it was: a write-ahead
// log that lost records (truncated, deleted, damaged past what recovery
// reports) leaves a consistent but shorter ledger.
Status checkAcknowledgedHead(const Ledger& ledger, const std::string& dir,
                             const std::optional<AcknowledgedHead>& acknowledged,
                             std::uint64_t heldSeq) {
  if (!acknowledged) return Status::ok();
  if (Status st = checkHeldRecords(dir, acknowledged->seq, heldSeq); !st.isOk()) return st;
  if (acknowledged->seq > 0) {
    std::string stored;
    Status st = ledger.getRaw(format::kLogFamily, format::seqKey(acknowledged->seq), &stored);
    if (!st.isOk() && !st.isNotFound()) return st;
    if (st.isNotFound() || stored.size() < format::kHashSize ||
        std::memcmp(stored.data(), acknowledged->hash.data(), format::kHashSize) != 0) {
      return Status::corruption(
          "ledger " + dir + ": the record at seq " + std::to_string(acknowledged->seq) +
          " is not the one committed (its chain hash differs)" + kRepairAdvice);
    }
  }
  return Status::ok();
}

// A read-only open of the families `descriptors` names: where RocksDB says
// one is missing, those the ledger has (below). `*vanished`: it failed on a
// file that was not there (live_writer.h).
Status openForReading(const rocksdb::DBOptions& dbo, const std::string& dir,
                      std::vector<rocksdb::ColumnFamilyDescriptor>* descriptors,
                      std::vector<rocksdb::ColumnFamilyHandle*>* handles, rocksdb::DB** raw,
                      bool* vanished) {
  handles->clear();
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(dbo, dir, *descriptors, handles, raw);
  if (s.IsInvalidArgument()) {
    // A version-1 ledger has no checkpoint_objects, one of version 2 or
    // less no object_index, one of 3 or less no usage_rollups, and a
    // read-only open cannot create them (nor open a family that is not
    // there): open what is there. Listing first on every open read the
    // manifest twice.
    std::vector<std::string> present;
    s = rocksdb::DB::ListColumnFamilies(dbo, dir, &present);
    if (s.ok()) {
      if (Status st = describeFamilies(dir, false, &present, descriptors); !st.isOk()) return st;
      handles->clear();
      s = rocksdb::DB::OpenForReadOnly(dbo, dir, *descriptors, handles, raw);
    }
  }
  *vanished = !s.ok() && isVanishedFile(s);
  return fromRocks(s, "opening ledger " + dir);
}

// A reader's open, beside a writer that may be live (live_writer.h). A file
// named by the manifest this open read may be gone by the time the open
// reaches it, and an edit of the manifest during the open leaves a view of
// no moment of the writer's: either way the next try reads the manifest
// again. A file missing where no writer holds the ledger is damage, said at
// once; a writer whose edits never pause is reported busy.
Status openBesideWriter(const rocksdb::DBOptions& dbo, const std::string& dir,
                        std::vector<rocksdb::ColumnFamilyDescriptor>* descriptors,
                        std::vector<rocksdb::ColumnFamilyHandle*>* handles, rocksdb::DB** raw) {
  const auto giveUp = std::chrono::steady_clock::now() + kReaderOpenPatience;
  for (int attempt = 1;; ++attempt) {
    const bool last = std::chrono::steady_clock::now() >= giveUp;
    const std::string before = manifestMark(dir);
    bool vanished = false;
    Status st = openForReading(dbo, dir, descriptors, handles, raw, &vanished);
    if (st.isOk() && manifestMark(dir) == before) return st;
    if (st.isOk()) {
      std::unique_ptr<rocksdb::DB> stale(std::exchange(*raw, nullptr));
      for (auto* h : *handles) stale->DestroyColumnFamilyHandle(h).PermitUncheckedError();
      handles->clear();
      if (last) {
        return Status::busy("opening ledger " + dir +
                            ": its writer changed the ledger's files during each of " +
                            std::to_string(attempt) + " opens; try again");
      }
    } else if (!vanished || last || !writerHoldsLedger(dir)) {
      return st;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * std::min(attempt, 10)));
  }
}

}  // namespace

Status Ledger::openFamilies(const rocksdb::DBOptions& dbo) {
  const bool writable = !options_.readOnly;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  if (Status st = describeFamilies(dir_, writable, nullptr, &descriptors); !st.isOk()) return st;
  rocksdb::DB* raw = nullptr;
  if (options_.readOnly) {
    Status st = openBesideWriter(dbo, dir_, &descriptors, &families_->handles, &raw);
    if (!st.isOk()) return st;
  } else {
    rocksdb::Status s = rocksdb::DB::Open(dbo, dir_, descriptors, &families_->handles, &raw);
    if (!s.ok()) return fromRocks(s, "opening ledger " + dir_);
  }
  db_.reset(raw);
  for (std::size_t i = 0; i < descriptors.size(); ++i) {
    families_->byName[descriptors[i].name] = families_->handles[i];
  }
  families_->logTableOptions = rocksdb::Options(dbo, familyOptions(format::kLogFamily, writable));
  return Status::ok();
}

Status Ledger::findLegacyEventKeys() {
  // Keys of earlier builds (format.h): one seek, so that a ledger without
  // any answers the ingester's lookup of them without RocksDB (ledger.h).
  // A reader looks up no dedupe keys, and keeps its open short.
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kEventsFamily)));
  const rocksdb::Slice prefix(format::kLegacyEventKeyPrefix.data(),
                              format::kLegacyEventKeyPrefix.size());
  it->Seek(prefix);
  if (!it->status().ok()) return fromRocks(it->status(), "opening ledger " + dir_);
  legacyEventKeys_.store(it->Valid() && it->key().starts_with(prefix), std::memory_order_release);
  return Status::ok();
}

Status Ledger::writeCurrentFormat(const char* what) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  Status st =
      fromRocks(db_->Put(wo, family(format::kMetaFamily),
                         rocksdb::Slice(format::kFormatKey.data(), format::kFormatKey.size()),
                         std::to_string(format::kCurrentFormat)),
                what);
  if (st.isOk()) formatVersion_ = format::kCurrentFormat;
  return st;
}

Status Ledger::initialiseFormat(std::uint64_t acknowledgedSeq) {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kLogFamily)));
  it->SeekToFirst();
  if (it->Valid())
    return Status::corruption("ledger " + dir_ + " has records but no format version");
  // Before anything is written: a writer that initialised the store here
  // would leave it looking new, its lost seqs free for the next commit.
  if (Status st = checkHeldRecords(dir_, acknowledgedSeq, 0); !st.isOk()) return st;
  if (options_.readOnly) return Status::notFound("ledger " + dir_ + " is empty and uninitialised");
  if (Status st = writeCurrentFormat("initialising ledger"); !st.isOk()) return st;
  // An empty ledger's object index covers every record it has.
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return fromRocks(
      db_->Put(
          wo, family(format::kMetaFamily),
          rocksdb::Slice(format::kObjectIndexKey.data(), format::kObjectIndexKey.size()),
          rocksdb::Slice(format::kObjectIndexComplete.data(), format::kObjectIndexComplete.size())),
      "initialising ledger");
}

Status Ledger::checkFormatVersion(const std::string& value) {
  int version = 0;
  try {
    version = std::stoi(value);
  } catch (...) {
    return Status::incompatible("ledger " + dir_ + " has an unreadable format version '" + value +
                                "'");
  }
  if (version < format::kOldestFormat || version > format::kCurrentFormat) {
    return Status::incompatible("ledger " + dir_ + " has format version " +
                                std::to_string(version) + "; this build reads versions " +
                                std::to_string(format::kOldestFormat) + " to " +
                                std::to_string(format::kCurrentFormat) +
                                (version > format::kCurrentFormat
                                     ? " (it was written by a newer ledger; upgrade)"
                                     : " (too old; export it with the release that wrote it)"));
  }
  formatVersion_ = version;
  if (version < format::kCurrentFormat && !options_.readOnly) {
    // 1 -> 2: the checkpoint_objects family, 2 -> 3 the object_index
    // family and 3 -> 4 usage_rollups, which the open above created empty;
    // 4 -> 5, 5 -> 6, 6 -> 7 and 7 -> 8 change nothing already written.
    // object_index gets no "complete" marker: it covers no record written
    // before. usage_rollups are derived like checkpoints: empty until the
    // next checkpoint run writes them.
    if (Status st = writeCurrentFormat("upgrading ledger format"); !st.isOk()) return st;
  }
  return Status::ok();
}

Status Ledger::loadFormatVersion(std::uint64_t acknowledgedSeq) {
  // Format version: written at creation (and by an upgrade), checked on every open.
  std::string value;
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), family(format::kMetaFamily),
               rocksdb::Slice(format::kFormatKey.data(), format::kFormatKey.size()), &value);
  if (s.IsNotFound()) return initialiseFormat(acknowledgedSeq);
  if (!s.ok()) return fromRocks(s, "reading ledger format");
  return checkFormatVersion(value);
}

Status Ledger::loadHead() {
  std::string value;
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), family(format::kMetaFamily),
               rocksdb::Slice(format::kHeadKey.data(), format::kHeadKey.size()), &value);
  if (s.ok()) {
    if (value.size() != 8 + format::kHashSize + 8)
      return Status::corruption("ledger head is malformed");
    head_.seq = format::decodeU64(value);
    std::memcpy(head_.hash.data(), value.data() + 8, format::kHashSize);
    head_.timeNs = static_cast<std::int64_t>(
        format::decodeU64(std::string_view(value).substr(8 + format::kHashSize)));
  } else if (!s.IsNotFound()) {
    return fromRocks(s, "reading ledger head");
  }
  return Status::ok();
}

Status Ledger::loadProjectionFormat() {
  // Which projector wrote the projections (format.h). A ledger without the
  // key was written by a build that recorded none; one without records has
  // no projections, so a writable open records this build's.
  std::string value;
  const rocksdb::Status s = db_->Get(
      rocksdb::ReadOptions(), family(format::kMetaFamily),
      rocksdb::Slice(format::kProjectionFormatKey.data(), format::kProjectionFormatKey.size()),
      &value);
  if (s.ok()) {
    const auto [end, ec] =
        std::from_chars(value.data(), value.data() + value.size(), projectionFormat_);
    if (ec != std::errc() || end != value.data() + value.size()) {
      return Status::incompatible("ledger " + dir_ + " has an unreadable projection format '" +
                                  value + "'");
    }
  } else if (!s.IsNotFound()) {
    return fromRocks(s, "reading the projection format");
  } else if (head_.seq == 0 && !options_.readOnly) {
    if (Status st = writeProjectionFormat(nullptr); !st.isOk()) return st;
  }
  return Status::ok();
}

Status Ledger::startAcknowledgedHead(std::optional<std::uint64_t> acknowledgedSeq) {
  // The head this open recovered is durable (RocksDB writes what it
  // recovers from the log to table files before DB::Open returns), so the
  // file may name it: ledgers of earlier builds start being checked here.
  const std::string path = (std::filesystem::path(dir_) / format::kAcknowledgedHeadFile).string();
  headFd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (headFd_ < 0) {
    return fileError("opening " + path, std::error_code(errno, std::generic_category()));
  }
  if (!acknowledgedSeq || *acknowledgedSeq < head_.seq) {
    if (Status st = writeAcknowledgedHead(); !st.isOk()) return st;
    if (!acknowledgedSeq) {
      if (Status st = syncDirectory(dir_); !st.isOk()) return st;
    }
  }
  return Status::ok();
}

Status Ledger::open(const std::string& dir, const Options& options, std::unique_ptr<Ledger>* out) {
  bool exists = false;
  if (Status st = checkDirectory(dir, &exists); !st.isOk()) return st;
  if (!exists && (!options.createIfMissing || options.readOnly)) {
    return Status::notFound("no ledger at " + dir);
  }
  // Read before the database: a writer rewrites it only after a commit is
  // durable, so a reader beside a live writer finds at least this much.
  std::optional<AcknowledgedHead> acknowledged;
  if (Status st = readAcknowledgedHead(dir, &acknowledged); !st.isOk()) return st;
  // Before RocksDB takes the lock, so that a reader of this process never
  // opens (and closes) the lock file while this writer holds it.
  WriterRegistration registration;
  if (!options.readOnly) registration = WriterRegistration(dir);
  if (Status st = probeBeforeWritableOpen(dir, options, acknowledged); !st.isOk()) return st;
  rocksdb::DBOptions dbo;
  TableFileReservation pinned;
  if (Status st = databaseOptions(dir, options, exists, &dbo, &pinned); !st.isOk()) return st;

  std::unique_ptr<Ledger> ledger(new Ledger());
  ledger->dir_ = dir;
  ledger->options_ = options;
  ledger->families_ = std::make_unique<Families>();
  ledger->families_->writer = std::move(registration);
  ledger->families_->pinnedTables = std::move(pinned);
  if (Status st = ledger->openFamilies(dbo); !st.isOk()) return st;
  if (!options.readOnly) {
    if (Status st = ledger->findLegacyEventKeys(); !st.isOk()) return st;
  }
  const std::uint64_t acknowledgedSeq = acknowledged ? acknowledged->seq : 0;
  if (Status st = ledger->loadFormatVersion(acknowledgedSeq); !st.isOk()) return st;
  if (Status st = ledger->loadHead(); !st.isOk()) return st;
  if (Status st = ledger->loadProjectionFormat(); !st.isOk()) return st;
  if (Status st = checkAcknowledgedHead(*ledger, dir, acknowledged, ledger->head_.seq); !st.isOk())
    return st;
  if (Status st = ledger->loadArchiveCut(); !st.isOk()) return st;
  ledger->committedSeq_.store(ledger->head_.seq, std::memory_order_release);
  if (!options.readOnly) {
    if (Status st = ledger->dropUncommittedLog(); !st.isOk()) return st;
    const std::optional<std::uint64_t> named =
        acknowledged ? std::optional<std::uint64_t>(acknowledged->seq) : std::nullopt;
    if (Status st = ledger->startAcknowledgedHead(named); !st.isOk()) return st;
  }
  *out = std::move(ledger);
  return Status::ok();
}

}  // namespace ledger
