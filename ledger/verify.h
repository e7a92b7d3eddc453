// Integrity check of a ledger: the log (dense sequence from 1, every record
// decodes and carries its own seq, the SHA-256 chain links each record to the
// one before, times never go backwards, the head matches the last record)
// and every family derived from it, which the chain does not cover and which
// therefore has to be derived again and compared:
//   projection   every record has one that decodes in full and names the
//                record's type, time and identity; with VerifyOptions::project,
//                it is byte for byte what the record's JSON projects to. One
//                that differs in a ledger whose projections an older
//                projector wrote (Ledger::projectionFormat) is reported as
//                that, with the rebuild as the fix, not as an edit.
//   time_index   exactly one entry per record, timeKey(time, seq), no other.
//   events       every dedupe key names a committed record that forms that
//                key (today's format, or with VerifyOptions::legacyDedupeKeys
//                an earlier build's); with VerifyOptions::dedupeKey, every
//                record's key is there and names the last record forming
//                it, or a key of an earlier build's names the record.
//   live         exactly the objects whose last record is not a deletion,
//                each with that record's uid and resourceVersion (and, when
//                the value carries one, the digest of its JSON).
// Checkpoints are checked by replay::verifyCheckpoints (a fresh fold).
//
// The log's scan runs on every core, each thread checking a range of seqs
// from the stored hash of the record before it (ledger/internal/
// verify_scan.h); the answer is the single pass's. The VerifyOptions
// functions other than `progress` are called from those threads at once.
//
// Thread safety: reads only. The families are read as they are when each
// scan starts: beside a running appender (a writable Ledger appended to from
// another thread), entries the appender adds for records past the head the
// check started from are ignored, but the live view may already describe
// them: check a ledger opened read-only (as `ledger-replay verify` does),
// which sees one fixed state. Errors: problems found are reported in
// VerifyReport (firstBadSeq, or badFamily and badKey); the Status is for
// failures to read at all.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/ledger.h"

namespace ledger {

struct VerifyReport {
  std::uint64_t recordsChecked = 0;
  std::uint64_t lastSeq = 0;
  std::string lastHashHex;
  std::uint64_t firstBadSeq = 0;  // the first record found wrong, 0 when none
  // A derived family's entry that is wrong with no record to name (a key
  // naming no committed record, an object no record describes): the family
  // and the key, printable (bytes outside ASCII and NUL as \xNN).
  std::string badFamily;
  std::string badKey;
  std::string problem;  // what is wrong there
  bool ok() const { return firstBadSeq == 0 && badFamily.empty(); }
};

// How the writer derived what the ledger layer cannot derive by itself (the
// projection and the dedupe keys are the ingest layer's). Unset: the check
// of those families is limited to what the ledger layer can know.
struct VerifyOptions {
  // Projection bytes (schema::Projection) for a record, as ingest made them
  // (ingest::projectJsonText with the ingest's ProjectionOptions).
  std::function<std::string(const Record&)> project;
  // The record's dedupe key (ingest::dedupeKeyOf), "" for none.
  std::function<std::string(const Record&)> dedupeKey;
  // The keys earlier builds formed for the record in another format
  // (ingest::legacyDedupeKeysOf). A key in `events` that is one of them and
  // names the record is derived from the log as surely as today's key, and
  // stands for it: a ledger an earlier build wrote has only those.
  std::function<std::vector<std::string>(const Record&)> legacyDedupeKeys;
  // Called on the calling thread now and then during the log's scan, the
  // longest part of the check: (the seq checked up to, the head verified).
  // For a progress line (tools/progress.h); must not throw.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  // How many ranges of seqs the log's scan is split into, each checked on a
  // thread of its own; 0: one per core, once the log is long enough to pay
  // for the threads. The answer is the same for any split.
  unsigned scanRanges = 0;
  // The archive of a cut ledger (ledger-replay archive): the entries the
  // cut keeps of the archived records (dedupe keys naming them, live
  // entries of objects whose last record is archived, the object index's
  // referrer keys) are checked against the archive's own families, both
  // ways. Unset, they are taken as the link to the archive is. Borrowed for
  // the call; the archive is checked alone by its own verifyLog.
  const Ledger* archive = nullptr;
};

[[nodiscard]] Status verifyLog(const Ledger& ledger, VerifyReport* report,
                               const VerifyOptions& options = {});

// Where a check of the chain stopped, for the next to go on from.
struct ChainPoint {
  std::uint64_t seq = 0;  // the last record checked; 0: before the first
  Digest hash{};          // its stored chain hash (zero before the first)
  std::int64_t timeNs = INT64_MIN;
};

// verifyLog's checks of the log alone (seqs dense, each record decodes and
// holds its seq, the SHA-256 chain links it to the one before, times never
// go back) for the records after `from` up to `to` (0: the committed head),
// taking `from` as verified: a long-running writer checks what it committed
// since its last check, in time proportional to that, not to the ledger
// (`ledger-replay verify` checks the whole ledger and the derived families).
// Reads only committed records, so it may run beside the appender. The
// report says what verifyLog would of those records (recordsChecked,
// firstBadSeq, problem, lastSeq, lastHashHex); *next (when given) becomes
// the last sound record, so a failed check can be repeated from there.
[[nodiscard]] Status verifyChain(const Ledger& ledger, const ChainPoint& from, std::uint64_t to,
                                 VerifyReport* report, ChainPoint* next = nullptr);

// What verifyLog checks of each stored projection: `bytes` decode in full as
// a ProjectedRecord that reads as no more than it holds, and, when `record`
// is given, name its type, time and identity. The projection is derived
// from the log and not covered by the chain, so it is checked against the
// record; in full, because Cap'n Proto checks a pointer only when it is
// followed and a fold follows few (the identity, the kind): a record that
// folds can still hold a list pointing outside its message, or claiming a
// length it does not hold, which the first report to read it trips on.
// Corruption, with the reason, otherwise.
[[nodiscard]] Status checkProjection(std::string_view bytes, const Record* record = nullptr);

}  // namespace ledger
