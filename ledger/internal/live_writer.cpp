#include "ledger/internal/live_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>

namespace ledger {

namespace {

// Directories are compared as their canonical paths, so that "l" and "./l"
// are one ledger; a directory that does not exist yet keeps its own spelling.
std::string registryKey(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(dir, ec);
  return ec ? dir : p.string();
}

struct Registry {
  std::mutex mu;
  std::map<std::string, int> writers;  // key: writable Ledgers open on it
};

Registry& registry() {
  static Registry r;
  return r;
}

bool registeredHere(const std::string& key) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.writers.count(key) != 0;
}

// RocksDB's PosixEnv::LockFile takes a write lock on the whole LOCK file
// (F_SETLK, F_WRLCK); F_GETLK reports a conflicting lock of another process.
bool lockedByAnotherProcess(const std::string& dir) {
  const std::string lockPath = (std::filesystem::path(dir) / "LOCK").string();
  const int fd = ::open(lockPath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = 0;
  probe.l_len = 0;
  const bool held = ::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

}  // namespace

bool writerHoldsLedger(const std::string& dir) {
  const std::string key = registryKey(dir);
  if (registeredHere(key)) return true;
  return lockedByAnotherProcess(key);
}

std::string manifestMark(const std::string& dir) {
  std::ifstream current(std::filesystem::path(dir) / "CURRENT", std::ios::binary);
  std::string name;
  if (!current || !std::getline(current, name) || name.empty()) return {};
  std::error_code ec;
  const auto size = std::filesystem::file_size(std::filesystem::path(dir) / name, ec);
  if (ec) return {};
  return name + ":" + std::to_string(size);
}

std::size_t countTableFiles(const std::string& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".sst") ++n;
  }
  return n;
}

bool isVanishedFile(const rocksdb::Status& s) {
  // RocksDB reports a table file missing at open as Corruption, either its
  // own listing's ("Missing sst file") or wrapping the failed open's I/O
  // error, and a missing log or manifest as an I/O error (PathNotFound);
  // the I/O errors carry strerror(ENOENT).
  if (!s.IsIOError() && !s.IsCorruption() && !s.IsPathNotFound()) return false;
  const std::string text = s.ToString();
  return text.find(std::strerror(ENOENT)) != std::string::npos ||
         text.find("Missing sst file") != std::string::npos;
}

namespace {
std::atomic<std::size_t> reservedTableFiles{0};
}  // namespace

TableFileReservation TableFileReservation::tryReserve(std::size_t files, std::size_t budget) {
  TableFileReservation r;
  if (files == 0) return r;
  std::size_t held = reservedTableFiles.load();
  do {
    if (held + files > budget) return r;
  } while (!reservedTableFiles.compare_exchange_weak(held, held + files));
  r.files_ = files;
  return r;
}

TableFileReservation::~TableFileReservation() {
  if (files_ != 0) reservedTableFiles.fetch_sub(files_);
}

TableFileReservation::TableFileReservation(TableFileReservation&& other) noexcept
    : files_(std::exchange(other.files_, 0)) {}

TableFileReservation& TableFileReservation::operator=(TableFileReservation&& other) noexcept {
  if (this != &other) {
    TableFileReservation dropped(std::move(*this));
    files_ = std::exchange(other.files_, 0);
  }
  return *this;
}

WriterRegistration::WriterRegistration(std::string dir) : key_(registryKey(dir)) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  ++r.writers[key_];
}

WriterRegistration::~WriterRegistration() {
  if (key_.empty()) return;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.writers.find(key_);
  if (it != r.writers.end() && --it->second == 0) r.writers.erase(it);
}

WriterRegistration::WriterRegistration(WriterRegistration&& other) noexcept
    : key_(std::exchange(other.key_, {})) {}

WriterRegistration& WriterRegistration::operator=(WriterRegistration&& other) noexcept {
  if (this != &other) {
    WriterRegistration dropped(std::move(*this));
    key_ = std::exchange(other.key_, {});
  }
  return *this;
}

}  // namespace ledger
