// A reader beside a live writer. RocksDB's read-only open reads the manifest
// and then opens the files it names; it opens table files lazily, as reads
// first touch them. A writer in another process (`ledger-ingest --watch`, a
// fleet consumer) deletes the files its flushes and compactions replaced,
// and the write-ahead logs it flushed, without knowing of any reader: a
// reader that opened a file before that reads on (an open descriptor keeps
// an unlinked file), one that had not yet opened it finds it gone. RocksDB
// documents the same for its secondary instances, which it recommends to
// open with max_open_files = -1 for that reason. The ledger's own business:
// nothing outside ledger/ includes it.
//
// Errors: nothing here fails; what cannot be read counts as "no writer".
// Thread safety: every function may be called from any thread; the writers'
// registry is guarded.
#pragma once

#include <cstddef>
#include <string>

#include <rocksdb/status.h>

namespace ledger {

// Whether a writer holds the ledger at `dir`: a `Ledger` opened for writing
// in this process (registered below), or another process holding RocksDB's
// LOCK file (an fcntl lock, tested with F_GETLK). The lock file is opened
// only when no writer of this process holds `dir`: POSIX releases every
// lock a process holds on a file when it closes any descriptor of that file,
// so a check from the writer's own process would release the writer's lock.
bool writerHoldsLedger(const std::string& dir);

// What RocksDB's manifest is at the moment: CURRENT's text and the size of
// the manifest it names ("" when unreadable). A read-only open reads the
// manifest first and the write-ahead logs after it, and a writer's flush,
// compaction or table commit in between (each an edit appended to the
// manifest) leaves it a view of neither moment: a log the flush deleted is
// skipped, or a head the logs moved names records of a table the manifest
// read did not list. The same mark before and after the open: no edit came
// in between, and the view is the writer's at the logs' read.
std::string manifestMark(const std::string& dir);

// The table files in `dir` (one directory listing).
std::size_t countTableFiles(const std::string& dir);

// A status of RocksDB's open that says a file it named was not there: a
// table file or log a live writer deleted between the manifest's read and
// the file's open (or a damaged store, which stays so when tried again).
bool isVanishedFile(const rocksdb::Status& s);

// Table files held open by this process's readers that opened every one
// (beside a live writer), counted against one budget for the process: two
// snapshots of `serve` during a refresh, or a fleet's copies, each hold
// their own. Move-only; gives its files back when destroyed.
class TableFileReservation {
 public:
  TableFileReservation() = default;
  // `files` more within `budget` for the whole process, or an empty
  // reservation when they do not fit (the reader then opens lazily).
  static TableFileReservation tryReserve(std::size_t files, std::size_t budget);
  ~TableFileReservation();
  TableFileReservation(TableFileReservation&& other) noexcept;
  TableFileReservation& operator=(TableFileReservation&& other) noexcept;
  TableFileReservation(const TableFileReservation&) = delete;
  TableFileReservation& operator=(const TableFileReservation&) = delete;
  explicit operator bool() const { return files_ != 0; }

 private:
  std::size_t files_ = 0;
};

// Registers a writable ledger's directory for writerHoldsLedger for its
// lifetime; move-only. Registered before RocksDB takes the lock and
// unregistered after it releases it.
class WriterRegistration {
 public:
  WriterRegistration() = default;
  explicit WriterRegistration(std::string dir);
  ~WriterRegistration();
  WriterRegistration(WriterRegistration&& other) noexcept;
  WriterRegistration& operator=(WriterRegistration&& other) noexcept;
  WriterRegistration(const WriterRegistration&) = delete;
  WriterRegistration& operator=(const WriterRegistration&) = delete;

 private:
  std::string key_;  // empty: nothing registered
};

}  // namespace ledger
