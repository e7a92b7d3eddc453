// The ledger directory's files outside RocksDB's and the checks on them
// before RocksDB opens it: whether the directory holds a whole database or
// may take a new one, and the acknowledged head file (format.h) that names
// the last commit a writer acknowledged. The ledger's own business: nothing
// outside ledger/ includes it.
//
// Errors: every function returns a Status; nothing throws. Thread safety: the
// functions hold no state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "ledger/ledger.h"
#include "ledger/status.h"

namespace ledger {

// Appended to the message of a store RocksDB cannot open as it is: how to get
// the ledger back.
extern const char* const kRepairAdvice;

// An I/O error, or permission denied when that is what `ec` says.
Status fileError(const std::string& what, const std::error_code& ec);

// Checks `dir` before RocksDB sees it, because DB::Open with
// create_if_missing writes a new CURRENT (an empty database) wherever CURRENT
// is missing, and its next open deletes the old table files as obsolete.
// *exists: `dir` holds a database whose CURRENT names a manifest that is
// there (RocksDB reads the rest); false: `dir` is absent or may take a new one.
Status checkDirectory(const std::string& dir, bool* exists);

// Whether `dir` holds a file ending in `extension` with anything in it.
bool hasFilled(const std::string& dir, std::string_view extension);

struct AcknowledgedHead {
  std::uint64_t seq = 0;
  Digest hash{};
};

// The acknowledged head file's 64 bytes (format.h).
std::string encodeAcknowledgedHead(std::uint64_t seq, const Digest& hash, std::int64_t timeNs);

// The acknowledged head file in `dir`; nullopt when there is none (or it is
// empty: an open killed before its first write acknowledged nothing).
Status readAcknowledgedHead(const std::string& dir, std::optional<AcknowledgedHead>* out);

// Corruption when the store holds records only up to `heldSeq` but a writer
// acknowledged `acknowledgedSeq` (0: nothing acknowledged).
Status checkHeldRecords(const std::string& dir, std::uint64_t acknowledgedSeq,
                        std::uint64_t heldSeq);

// Makes a new directory entry durable (fsync(2) of the directory).
Status syncDirectory(const std::string& dir);

}  // namespace ledger
