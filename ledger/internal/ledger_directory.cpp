// The ledger directory's files outside RocksDB's (ledger/internal/ledger_directory.h).
#include "ledger/internal/ledger_directory.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "ledger/format.h"

namespace ledger {

// How to get a ledger back whose database files RocksDB cannot open as they
// are: RocksDB's repair rebuilds CURRENT and the manifest from the table
// files and write-ahead logs it finds (rocksdb/db.h, RepairDB).
const char* const kRepairAdvice =
    "; nothing was changed. Recover it with RocksDB's repair (`ldb repair --db=DIR`, or "
    "rocksdb::RepairDB) or restore a backup, then check it with `ledger-replay verify`";

Status fileError(const std::string& what, const std::error_code& ec) {
  if (ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted) {
    return Status::permissionDenied(what + ": " + ec.message());
  }
  return Status::ioError(what + ": " + ec.message());
}

namespace {

// RocksDB's own files (its db/filename.cc names them) and the ledger's head
// and verification files: evidence that a database lives in a directory even when its CURRENT
// is gone. Not those DB::Open writes while it creates a database, before
// CURRENT: IDENTITY, the first manifest and CURRENT's temporary file.
bool isDatabaseFile(std::string_view name) {
  return name.ends_with(".sst") || name.ends_with(".log") || name.ends_with(".blob") ||
         (name.starts_with("MANIFEST-") && name != "MANIFEST-000001") ||
         name.starts_with("OPTIONS-") || name == format::kAcknowledgedHeadFile ||
         name == format::kVerificationFile;
}

// What may sit in a directory a new ledger is created in: what DB::Open
// writes before CURRENT when it creates a database (its lock, info log,
// IDENTITY, first manifest, CURRENT's temporary file), so that a creation
// that stopped there can be run again; the ledger's staging directory; and
// the lost+found at the root of a file system (a volume mounted as the
// ledger).
bool mayPrecedeCreation(std::string_view name) {
  return name == "LOCK" || name == "LOG" || name.starts_with("LOG.old") || name == "IDENTITY" ||
         name == "MANIFEST-000001" || name.ends_with(".dbtmp") || name == "staging" ||
         name == "lost+found";
}

}  // namespace

Status checkDirectory(const std::string& dir, bool* exists) {
  namespace fs = std::filesystem;
  *exists = false;
  const fs::path root(dir);
  std::error_code ec;
  const fs::file_status status = fs::status(root, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return fileError("reading " + dir, ec);
  if (!fs::exists(status)) return Status::ok();
  if (!fs::is_directory(status)) return Status::invalidArgument(dir + " is not a directory");
  const fs::path current = root / "CURRENT";
  const bool hasCurrent = fs::exists(current, ec);
  if (ec) return fileError("reading " + current.string(), ec);
  if (hasCurrent) {
    // CURRENT is the manifest's file name and a newline (RocksDB's
    // SetCurrentFile writes it so, atomically by a rename).
    std::ifstream in(current, std::ios::binary);
    if (!in) {
      return fileError("reading " + current.string(),
                       std::error_code(errno, std::generic_category()));
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() < 2 || text.back() != '\n' || !text.starts_with("MANIFEST-") ||
        text.find('/') != std::string::npos) {
      return Status::corruption("ledger " + dir + ": CURRENT does not name a manifest" +
                                kRepairAdvice);
    }
    text.pop_back();
    const bool hasManifest = fs::exists(root / text, ec);
    if (ec) return fileError("reading " + (root / text).string(), ec);
    if (!hasManifest) {
      return Status::corruption("ledger " + dir + ": its manifest " + text +
                                " (named by CURRENT) is missing" + kRepairAdvice);
    }
    *exists = true;
    return Status::ok();
  }
  std::vector<std::string> database, other;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (isDatabaseFile(name)) {
      database.push_back(name);
    } else if (!mayPrecedeCreation(name)) {
      other.push_back(name);
    }
  }
  if (ec) return fileError("listing " + dir, ec);
  if (!database.empty()) {
    std::sort(database.begin(), database.end());
    std::string names;
    for (std::size_t i = 0; i < database.size() && i < 3; ++i) {
      names += (i ? ", " : "") + database[i];
    }
    if (database.size() > 3) names += ", ...";
    return Status::corruption("ledger " + dir + " holds a database's files (" + names +
                              ") but no CURRENT" + kRepairAdvice);
  }
  if (!other.empty()) {
    return Status::invalidArgument(dir + " holds no ledger but is not empty (" + other.front() +
                                   "): a new ledger is created only in an empty directory");
  }
  return Status::ok();
}

bool hasFilled(const std::string& dir, std::string_view extension) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == extension && it->file_size(ec) > 0 && !ec) return true;
  }
  return false;
}

std::string encodeAcknowledgedHead(std::uint64_t seq, const Digest& hash, std::int64_t timeNs) {
  std::string out(format::kAcknowledgedHeadMagic);
  out += format::encodeU64(seq);
  out.append(reinterpret_cast<const char*>(hash.data()), hash.size());
  out += format::encodeU64(static_cast<std::uint64_t>(timeNs));
  out += format::encodeU64(XXH3_64bits(out.data(), out.size()));
  return out;
}

Status readAcknowledgedHead(const std::string& dir, std::optional<AcknowledgedHead>* out) {
  out->reset();
  const std::string path = (std::filesystem::path(dir) / format::kAcknowledgedHeadFile).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return Status::ok();
    return fileError("reading " + path, std::error_code(errno, std::generic_category()));
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Empty: created by an open that stopped (killed) before its first write,
  // which is the file's only way to be short of whole (every write is the
  // 64 bytes at offset 0, made durable before anything is acknowledged).
  // Nothing was acknowledged through it, as when it is absent.
  if (bytes.empty()) return Status::ok();
  const std::size_t body = format::kAcknowledgedHeadSize - 8;
  if (bytes.size() != format::kAcknowledgedHeadSize ||
      !bytes.starts_with(format::kAcknowledgedHeadMagic) ||
      format::decodeU64(std::string_view(bytes).substr(body)) != XXH3_64bits(bytes.data(), body)) {
    return Status::corruption(path +
                              " is malformed; it names the last commit acknowledged, so "
                              "that cannot be checked. Check the ledger with `ledger-replay "
                              "verify`; if it is sound, delete the file to accept it as it is");
  }
  AcknowledgedHead head;
  head.seq = format::decodeU64(std::string_view(bytes).substr(8));
  std::memcpy(head.hash.data(), bytes.data() + 16, head.hash.size());
  *out = head;
  return Status::ok();
}

// The one diagnosis of a store that holds fewer records than a writer
// acknowledged (format.h, `ledger-head`), whoever opens it: a reader
// (verify, reports, serve) and a writer (ingest) name the same lost seqs, and
// a store whose write-ahead log held every record, now gone, is such a
// store (it holds no record and no format version), not a new one.
// `acknowledgedSeq` is 0 when no acknowledged head was read: then nothing
// was acknowledged that could be lost.
Status checkHeldRecords(const std::string& dir, std::uint64_t acknowledgedSeq,
                        std::uint64_t heldSeq) {
  if (acknowledgedSeq <= heldSeq) return Status::ok();
  return Status::corruption(
      "ledger " + dir + " holds records up to seq " + std::to_string(heldSeq) + " but seq " +
      std::to_string(acknowledgedSeq) + " was committed: seqs " + std::to_string(heldSeq + 1) +
      ".." + std::to_string(acknowledgedSeq) + " are lost (a damaged or lost write-ahead log)" +
      kRepairAdvice + ". To accept the loss and let the next commit reuse those seqs, delete " +
      (std::filesystem::path(dir) / format::kAcknowledgedHeadFile).string());
}

Status syncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fileError("syncing " + dir, std::error_code(errno, std::generic_category()));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return fileError("syncing " + dir, std::error_code(err, std::generic_category()));
  return Status::ok();
}

}  // namespace ledger
