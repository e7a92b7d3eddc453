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

}  // namespace ledger
