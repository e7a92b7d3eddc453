// The newest verification of a ledger, kept beside its database files in
// `ledger-verified` (format::kVerificationFile), so that every answer can
// state what was last proven of the ledger it reads (docs/reference.md,
// "The proof line").
//
// Why a file and not a meta key: `ledger-replay verify` opens the ledger
// read-only, beside a daemon that holds it writable (RocksDB's lock), and
// still has to record what it found; and a reader must see the record the
// moment it is written, without reopening the database.
//
// Contract of the file: one JSON object,
//   {"format": 1, "scope": "full" | "chain", "timeNs": N, "upToSeq": N,
//    "ok": true | false, "failedSeq": N, "problem": "..."}
// scope "full" is `ledger-replay verify` (the log and every derived family);
// "chain" is the daemon's background check of the hash chain alone
// (tools/ledger_upkeep.h). timeNs is the wall clock when the check ended;
// upToSeq the last record it covered (every one up to it found sound when
// ok); failedSeq the first record found wrong (0 when it failed on a key no
// record names, or could not read).
// Written whole to a temporary file, fsynced and renamed over the old one
// (then the directory fsynced), so a reader sees the old record or the new,
// never a mixture. Not part of the ledger's format (format.h): derived
// statements, absent on ledgers never verified, and a damaged one is
// replaced by the next verification.
//
// Which record is newest: a later one replaces an earlier, except that a
// passing chain check does not replace a failed full verification: the
// chain does not cover the derived families a full verification found
// edited, so only a full verification that passes clears that failure.
//
// Thread and process safety: recordVerification holds an exclusive flock(2)
// on the ledger directory for its read, decision and rename, so a daemon's
// check and a `verify` beside it do not lose each other's record.
// Errors: Status values (the storage layer's model); a record that is not
// one (bad JSON, missing or mistyped fields, unknown format) is Corruption
// naming the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ledger/status.h"

namespace ledger {

enum class VerificationScope { kFull, kChain };

struct Verification {
  VerificationScope scope = VerificationScope::kFull;
  std::int64_t timeNs = 0;
  std::uint64_t upToSeq = 0;
  bool ok = true;
  std::uint64_t failedSeq = 0;
  std::string problem;  // failed: where and what, as the check reported it
  bool operator==(const Verification&) const = default;
};

// The record in `dir`; nullopt when there is none (never verified).
[[nodiscard]] Status readVerification(const std::string& dir, std::optional<Verification>* out);

// Records `v` in `dir` unless the rule above keeps the record there
// (*replaced, when given, says which). A damaged record is replaced.
[[nodiscard]] Status recordVerification(const std::string& dir, const Verification& v,
                                        bool* replaced = nullptr);

// The file's text for `v`, and back (Corruption for anything else).
std::string encodeVerification(const Verification& v);
[[nodiscard]] Status decodeVerification(const std::string& text, Verification* out);

}  // namespace ledger
