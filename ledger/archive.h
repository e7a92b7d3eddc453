// A sealed archive: the first records of a ledger, copied into a ledger of
// their own in another directory, so that they can leave the live ledger and
// still be proven (the contract's "Retention": the archive verifies alone).
//
// Layout: the archive directory is a ledger (format.h) holding records
// 1..N of the source, each with the same bytes and so the same chain hash,
// every derived family written by the ledger's own append (projection, time
// index, dedupe keys, live view, object index), plus whatever
// ArchiveOptions::beforeSeal adds (the replay layer's checkpoints and
// rollups). Beside its database files, `ledger-archive` (kArchiveSealFile)
// seals it, 64 bytes: "LEDGARCH", the last seq N (8 bytes BE), its chain
// hash (32), its time (8 bytes BE), XXH3-64 of the 56 bytes before (8 bytes
// BE), as the acknowledged head file (format.h, ledger-head) is laid out.
// `ledger-replay verify DIR` checks an archive as any ledger.
//
// Order (what a kill -9 leaves): the records are appended with the write-
// ahead log synced, the archive ledger is closed (its memtables flushed to
// table files), the directory fsynced, and only then the seal written to a
// temporary file, fsynced, renamed into place and the directory fsynced
// again. A directory without the seal is an archive that did not finish:
// writeArchive refuses it, naming it, and never deletes it; the source is
// only read, so it is as it was. A sealed archive is never written in
// place: extendArchive seals a copy and swaps it in.
//
// Thread safety: writeArchive only reads the source (it may run beside the
// source's appender: it copies committed records up to `lastSeq`) and owns
// the archive for the call. Errors: Status values (the storage layer's
// model); each names the directory or file concerned.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ledger/ledger.h"
#include "ledger/sha256.h"
#include "ledger/status.h"
#include "ledger/verify.h"

namespace ledger {

inline constexpr const char* kArchiveSealFile = "ledger-archive";

// What a seal states: the archive's last record and its chain hash, the
// link the live ledger's next record continues the chain from.
struct ArchiveSeal {
  std::uint64_t lastSeq = 0;
  Digest lastHash{};
  std::int64_t lastTimeNs = 0;
  bool operator==(const ArchiveSeal&) const = default;
};

struct ArchiveOptions {
  // How the records' projections and dedupe keys are derived: the ingest
  // layer's, as verify takes them (VerifyOptions::project is required,
  // dedupeKey may be unset for none; legacyDedupeKeys is not used: the
  // archive's keys are this build's).
  VerifyOptions derive;
  // Called with the archive, every record appended, before it is sealed
  // (the caller's checkpoints and rollups); an error leaves it unsealed.
  std::function<Status(Ledger& archive)> beforeSeal;
  std::size_t batchRecords = 4096;  // records per append
};

// Copies records 1..lastSeq of `source` into a new sealed archive at `dir`
// (absent or empty) and says what its seal states. InvalidArgument for a
// lastSeq of 0 or past the source's head, and for a `dir` holding anything
// (a sealed archive, an unfinished one, other files); Corruption when the
// copied chain does not reach the source's stored hash at lastSeq.
[[nodiscard]] Status writeArchive(const Ledger& source, std::uint64_t lastSeq,
                                  const std::string& dir, const ArchiveOptions& options,
                                  ArchiveSeal* seal);

// Extends the sealed archive at `dir` (its records 1..S, S its seal's seq)
// with records S+1..lastSeq of `source` and seals it again at lastSeq (a
// second `ledger-replay archive` of a cut ledger). Order (what a kill -9
// leaves): the archive is copied beside `dir` (DIR.extending: table files
// hard-linked), the records appended there, closed, sealed, and one
// rename(2) with RENAME_EXCHANGE swaps it with `dir`; the old archive is
// then removed. A crash leaves `dir` holding the old sealed archive or the
// new one, never a mix; a stale DIR.extending is removed by the next call.
// InvalidArgument when `dir` holds no seal or lastSeq is not after it and
// within the source; Corruption when the records appended do not reach the
// source's stored hash at lastSeq (the archive is not this ledger's).
[[nodiscard]] Status extendArchive(const Ledger& source, std::uint64_t lastSeq,
                                   const std::string& dir, const ArchiveOptions& options,
                                   ArchiveSeal* seal);

// The seal in `dir`; nullopt when there is none. Corruption naming the file
// for one that is not 64 bytes with its magic and checksum.
[[nodiscard]] Status readArchiveSeal(const std::string& dir, std::optional<ArchiveSeal>* out);

// Whether `archive` (opened from a sealed directory) ends where its seal
// says: Corruption naming the directory when its head differs.
[[nodiscard]] Status checkArchiveSeal(const Ledger& archive, const ArchiveSeal& seal);

}  // namespace ledger
