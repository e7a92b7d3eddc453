// Integrity check of a ledger's log: dense sequence from 1, every record
// decodes and carries its own seq, the SHA-256 chain links each record to the
// one before, times never go backwards, every record has a projection that
// decodes in full and names the record's type, time and identity, every
// record has a time-index entry, and the head matches the last record.
//
// Thread safety: reads only; safe beside a running appender (it checks the
// prefix that existed when it started). Errors: problems found are reported
// in VerifyReport (firstBadSeq); the Status is for failures to read at all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ledger.h"

namespace ledger {

struct VerifyReport {
  std::uint64_t recordsChecked = 0;
  std::uint64_t lastSeq = 0;
  std::string lastHashHex;
  std::uint64_t firstBadSeq = 0;  // 0: the log is sound
  std::string problem;            // what is wrong at firstBadSeq
  bool ok() const { return firstBadSeq == 0; }
};

[[nodiscard]] Status verifyLog(const Ledger& ledger, VerifyReport* report);

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
