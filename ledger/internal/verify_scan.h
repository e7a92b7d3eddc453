// verifyLog's scan of the log (ledger/verify.h): each record's own checks
// (dense seqs, decoding, the chain, times, the projection derived again) and
// what the derived families should hold according to the records, gathered
// for verify.cpp's checks of those families. Not part of the public
// interface; nothing outside ledger/ includes it.
//
// The scan splits the log into ranges, one per core, each checked on its
// own thread from the stored hash and time of the record before it: the
// range before checks that record's hash, so the chain is checked link by
// link as a single pass would. The merged result is the single pass's:
// what the records before the lowest bad seq say, and that seq.
//
// Thread safety: reads only (Ledger's reads are thread-safe); the
// VerifyOptions functions are called from several threads at once and must
// be safe to (ingest's projector and key functions keep per-thread
// scratch). Errors: problems found are Findings; the Status is for failures
// to read at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ledger/ledger.h"
#include "ledger/verify.h"

namespace ledger::verify_scan {

// The problem verifyLog reports: the lowest bad seq found by any check, else
// the first bad key of a family.
class Findings {
 public:
  void atSeq(std::uint64_t seq, std::string problem);
  void atKey(const char* family, std::string_view key, std::string problem);
  bool any() const { return seq_ != 0 || !family_.empty(); }
  std::uint64_t seq() const { return seq_; }
  void into(VerifyReport& report) const;
  // Keys are bytes (dedupe keys hold NULs, time keys are binary): printable
  // ASCII as it is, other bytes and the backslash as \xNN.
  static std::string printable(std::string_view bytes);

 private:
  std::uint64_t seq_ = 0;
  std::string family_;
  std::string key_;
  std::string problem_;
};

// A record's dedupe key, by its XXH3-64 (the keys themselves would hold the
// uid and resourceVersion of every record in memory), and its seq.
struct KeyedSeq {
  std::uint64_t keyHash = 0;
  std::uint64_t seq = 0;
  friend auto operator<=>(const KeyedSeq&, const KeyedSeq&) = default;
};

// What the live entry of an object should hold after its last record.
struct LiveExpectation {
  std::uint64_t seq = 0;
  std::string uid;
  std::string resourceVersion;
  // format.h: the digest of the record's JSON for an object without uid or
  // resourceVersion (PendingRecord::contentHash); none for the others.
  std::optional<Digest> contentHash;
  // The last record deletes the object: it has no live entry. Kept, not
  // erased, for a cut ledger, where an entry no record describes may be an
  // object whose last record is in the archive, but not one deleted since.
  bool deleted = false;
};

// What the log says, for the records read from the ledger's first up to the
// first bad one (all of them when none is).
struct LogScan {
  Findings findings;  // at a seq only
  std::uint64_t recordsChecked = 0;
  std::uint64_t lastSeq = 0;        // the last record checked
  Digest lastHash{};                // its stored hash (the cut's link, or zero, before the first)
  std::vector<std::int64_t> times;  // times[seq - firstSeq]
  std::vector<KeyedSeq> dedupe;     // (XXH3 of the record's dedupe key, seq)
  std::vector<KeyedSeq> legacyDedupe;                     // the same for keys of earlier builds
  std::unordered_map<std::string, LiveExpectation> live;  // by object key
  std::vector<std::uint64_t> indexKeys;  // XXH3 of the object_index keys (with `objectIndex`)
};

// Scans every record of `ledger` on up to std::thread::hardware_concurrency
// threads. `objectIndex`: also form each record's object_index keys.
[[nodiscard]] Status scanLog(const Ledger& ledger, const VerifyOptions& options, bool objectIndex,
                             LogScan* out);

}  // namespace ledger::verify_scan
