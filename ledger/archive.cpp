#include "ledger/archive.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

#include "ledger/format.h"

namespace ledger {

// Named, not anonymous: the unity build compiles the library as one unit.
namespace archive_files {

constexpr std::string_view kSealMagic = "LEDGARCH";
constexpr std::size_t kSealSize = 64;

std::string sealPath(const std::string& dir) {
  return (std::filesystem::path(dir) / kArchiveSealFile).string();
}

Status ioError(const std::string& what, int err) {
  return Status::ioError(what + ": " + std::generic_category().message(err));
}

std::string encodeSeal(const ArchiveSeal& seal) {
  std::string out(kSealMagic);
  format::appendU64(out, seal.lastSeq);
  out.append(reinterpret_cast<const char*>(seal.lastHash.data()), seal.lastHash.size());
  format::appendU64(out, static_cast<std::uint64_t>(seal.lastTimeNs));
  format::appendU64(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

// fsync(2) of a file or directory by path.
Status syncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return ioError("syncing " + path, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? Status::ok() : ioError("syncing " + path, err);
}

// Written whole beside, fsynced, renamed into place: a crash leaves no seal
// or the whole seal.
Status writeSeal(const std::string& dir, const ArchiveSeal& seal) {
  const std::string path = sealPath(dir);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    const std::string bytes = encodeSeal(seal);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) return ioError("writing " + temporary, errno ? errno : EIO);
  }
  if (Status st = syncPath(temporary, O_RDONLY); !st.isOk()) return st;
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    return ioError("renaming " + temporary, errno);
  return syncPath(dir, O_RDONLY | O_DIRECTORY);
}

Status checkTarget(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return Status::ok();
  if (std::filesystem::exists(sealPath(dir), ec)) {
    return Status::invalidArgument(dir + " already holds a sealed archive (" + kArchiveSealFile +
                                   "); an archive is written once: name a new directory");
  }
  if (!std::filesystem::is_directory(dir, ec) || !std::filesystem::is_empty(dir, ec)) {
    return Status::invalidArgument(
        dir + " is not an empty directory and holds no seal (" + kArchiveSealFile +
        "): an archive that did not finish, or other files; remove it or name another directory");
  }
  return Status::ok();
}

PendingRecord pendingOf(const Record& r, const VerifyOptions& derive) {
  PendingRecord p;
  p.type = r.type;
  p.timeNs = r.timeNs;
  p.identity = r.identity;
  p.objectJson = r.objectJson;
  p.projection = derive.project(r);
  if (derive.dedupeKey) p.dedupeKey = derive.dedupeKey(r);
  // As the ingester keeps them (format.h, live): objects without uid or
  // resourceVersion have only their JSON's digest to tell versions apart.
  if (r.identity.uid.empty() || r.identity.resourceVersion.empty()) {
    p.contentHash = Sha256::of(r.objectJson);
  }
  return p;
}

// Appends the source's records from..lastSeq to `archive`; *last is the
// source's stored hash and time of lastSeq.
Status copyRecords(const Ledger& source, std::uint64_t from, std::uint64_t lastSeq, Ledger& archive,
                   const ArchiveOptions& options, ArchiveSeal* last) {
  std::vector<PendingRecord> batch;
  Status failure = Status::ok();
  auto flush = [&] {
    AppendResult appended;
    failure = archive.append(batch, {}, &appended);
    batch.clear();
    return failure.isOk();
  };
  Status st = source.scanRecords(from, lastSeq, [&](const Record& r, const Digest& stored) {
    batch.push_back(pendingOf(r, options.derive));
    *last = ArchiveSeal{r.seq, stored, r.timeNs};
    return batch.size() < options.batchRecords || flush();
  });
  if (st.isOk() && failure.isOk() && !batch.empty()) flush();
  if (!st.isOk()) return st;
  return failure;
}

// A copy of the sealed archive `dir` in `staging` to extend: its table
// files are immutable, so hard links; the rest (manifest, options, the
// write-ahead log of a closed ledger) copied. The seal is left behind.
Status stageCopy(const std::string& dir, const std::string& staging) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (ec) return ioError("removing " + staging, ec.value());
  fs::create_directory(staging, ec);
  if (ec) return ioError("creating " + staging, ec.value());
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const fs::path name = entry.path().filename();
    if (!entry.is_regular_file() || name == kArchiveSealFile) continue;
    if (name.extension() == ".sst") {
      fs::create_hard_link(entry.path(), fs::path(staging) / name, ec);
    } else {
      fs::copy_file(entry.path(), fs::path(staging) / name, ec);
    }
    if (ec) return ioError("copying " + entry.path().string() + " to " + staging, ec.value());
  }
  return ec ? ioError("listing " + dir, ec.value()) : Status::ok();
}

// Appends source records from..lastSeq to the archive ledger in `dir`
// (unsealed: the staging copy), checks the chain reaches the source's hash
// and runs beforeSeal; *last says what the new seal states.
Status appendAndCheck(const Ledger& source, std::uint64_t from, std::uint64_t lastSeq,
                      const std::string& dir, const ArchiveOptions& options, ArchiveSeal* last) {
  Ledger::Options o;
  o.sync = true;
  std::unique_ptr<Ledger> archive;
  if (Status st = Ledger::open(dir, o, &archive); !st.isOk()) return st;
  if (Status st = copyRecords(source, from, lastSeq, *archive, options, last); !st.isOk()) {
    return st;
  }
  // The same bytes chain to the same hashes: anything else (a record the
  // append raised in time, an encoding that differs) is not the source.
  if (last->lastSeq != lastSeq || archive->lastSeq() != lastSeq ||
      archive->lastHash() != last->lastHash) {
    return Status::corruption("archive " + dir + ": the copied chain does not reach the hash " +
                              "the ledger stores at seq " + std::to_string(lastSeq));
  }
  // Returning closes the archive: its memtables flushed to table files
  // before a seal names them.
  return options.beforeSeal ? options.beforeSeal(*archive) : Status::ok();
}

}  // namespace archive_files

Status extendArchive(const Ledger& source, std::uint64_t lastSeq, const std::string& dir,
                     const ArchiveOptions& options, ArchiveSeal* seal) {
  std::optional<ArchiveSeal> old;
  if (Status st = readArchiveSeal(dir, &old); !st.isOk()) return st;
  if (!old) return Status::invalidArgument(dir + " holds no sealed archive to extend");
  if (lastSeq <= old->lastSeq || lastSeq > source.lastSeq()) {
    return Status::invalidArgument("archive " + dir + ": seq " + std::to_string(lastSeq) +
                                   " does not extend it (sealed at seq " +
                                   std::to_string(old->lastSeq) + ", the ledger ends at " +
                                   std::to_string(source.lastSeq()) + ")");
  }
  if (!options.derive.project) {
    return Status::invalidArgument("archive: no projector to derive the projections with");
  }
  const std::string staging =
      (std::filesystem::path(dir).lexically_normal().parent_path() /
       (std::filesystem::path(dir).lexically_normal().filename().string() + ".extending"))
          .string();
  if (Status st = archive_files::stageCopy(dir, staging); !st.isOk()) return st;
  ArchiveSeal last;
  // The copy's head is the old seal's link: the records after it continue
  // the chain from there (appendAndCheck compares the hashes it reaches).
  if (Status st =
          archive_files::appendAndCheck(source, old->lastSeq + 1, lastSeq, staging, options, &last);
      !st.isOk()) {
    return st;
  }
  if (Status st = archive_files::syncPath(staging, O_RDONLY | O_DIRECTORY); !st.isOk()) return st;
  if (Status st = archive_files::writeSeal(staging, last); !st.isOk()) return st;
  // One rename(2) swaps the old archive for the new: a crash leaves one or
  // the other under `dir`, each whole and sealed.
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
    return archive_files::ioError("exchanging " + staging + " and " + dir, errno);
  }
  const std::string parent = std::filesystem::path(dir).lexically_normal().parent_path().string();
  if (Status st = archive_files::syncPath(parent.empty() ? "." : parent, O_RDONLY | O_DIRECTORY);
      !st.isOk()) {
    return st;
  }
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);  // the old archive, now superseded
  *seal = last;
  return Status::ok();
}

Status writeArchive(const Ledger& source, std::uint64_t lastSeq, const std::string& dir,
                    const ArchiveOptions& options, ArchiveSeal* seal) {
  if (lastSeq == 0 || lastSeq > source.lastSeq()) {
    return Status::invalidArgument("archive: seq " + std::to_string(lastSeq) +
                                   " is not a record of the ledger (1.." +
                                   std::to_string(source.lastSeq()) + ")");
  }
  if (!options.derive.project) {
    return Status::invalidArgument("archive: no projector to derive the projections with");
  }
  if (Status st = archive_files::checkTarget(dir); !st.isOk()) return st;
  ArchiveSeal last;
  if (Status st = archive_files::appendAndCheck(source, 1, lastSeq, dir, options, &last);
      !st.isOk()) {
    return st;
  }
  if (Status st = archive_files::syncPath(dir, O_RDONLY | O_DIRECTORY); !st.isOk()) return st;
  if (Status st = archive_files::writeSeal(dir, last); !st.isOk()) return st;
  *seal = last;
  return Status::ok();
}

Status readArchiveSeal(const std::string& dir, std::optional<ArchiveSeal>* out) {
  out->reset();
  const std::string path = archive_files::sealPath(dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return Status::ok();
    return archive_files::ioError("reading " + path, errno);
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t body = archive_files::kSealSize - 8;
  if (bytes.size() != archive_files::kSealSize || !bytes.starts_with(archive_files::kSealMagic) ||
      format::decodeU64(std::string_view(bytes).substr(body)) != XXH3_64bits(bytes.data(), body)) {
    return Status::corruption("archive seal " + path +
                              " is damaged (not 64 bytes with its magic and checksum)");
  }
  ArchiveSeal seal;
  seal.lastSeq = format::decodeU64(std::string_view(bytes).substr(8));
  std::memcpy(seal.lastHash.data(), bytes.data() + 16, seal.lastHash.size());
  seal.lastTimeNs =
      static_cast<std::int64_t>(format::decodeU64(std::string_view(bytes).substr(48)));
  *out = seal;
  return Status::ok();
}

Status checkArchiveSeal(const Ledger& archive, const ArchiveSeal& seal) {
  if (archive.lastSeq() == seal.lastSeq && archive.lastHash() == seal.lastHash) {
    return Status::ok();
  }
  return Status::corruption("archive " + archive.directory() + " ends at seq " +
                            std::to_string(archive.lastSeq()) + " but its seal says seq " +
                            std::to_string(seal.lastSeq) + " with hash " + toHex(seal.lastHash));
}

}  // namespace ledger
