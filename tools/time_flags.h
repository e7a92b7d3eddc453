// The time and step flags the programs share (docs/reference.md, TIME):
// a TIME is RFC 3339, a date (2026-11-20: midnight UTC), a time before the
// wall clock (-2h, -7d, -30m, -90s, -1h30m), `now` (the wall clock) or `end`
// (the ledger's last record's time). A STEP is 30s, 5m, 1h, 1d, 1h30m.
//
// `end` needs the ledger, which a program opens after it reads its flags:
// the caller passes a LedgerEnd that opens it when asked (lastRecordEnd).
// Throws UsageError (program.h; exit 1) naming the flag and the accepted
// forms; thread-safe apart from what a LedgerEnd does.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ledger/ledger.h"

namespace ledger::cli {

// What a time flag does with a valid time outside the ledger's range
// (schema/k8s/rfc3339.h: int64 ns, 1677-09-21 to 2262-04-11).
enum class TimeBeyondRange {
  kReject,  // a period's bound (--from, --to): its length would be wrong
  kClamp,   // a moment (--at, --until): after (before) every record it can hold
};

// The time `end` names: the last record's time of the ledger the command
// reads. Empty: `end` is refused (the command reads no ledger).
using LedgerEnd = std::function<std::int64_t()>;

// A TIME as above, in ns; throws UsageError naming the flag.
std::int64_t parseTimeArg(const std::string& value, const char* flag,
                          TimeBeyondRange beyond = TimeBeyondRange::kReject,
                          const LedgerEnd& end = {});

// A step such as 30s, 5m, 1h, 1d or 1h30m (Prometheus' units s, m, h, d, w)
// in ns; throws UsageError naming the flag for anything else, zero, or a
// step past a year.
std::int64_t parseStepArg(const std::string& value, const char* flag);

// The time of the ledger's last record; nullopt when it holds none.
std::optional<std::int64_t> lastRecordTime(const Ledger& ledger);
// A LedgerEnd over the ledger `open` gives (called once, when `end` is
// asked for): its last record's time; UsageError when it holds none.
LedgerEnd lastRecordEnd(std::function<const Ledger&()> open);

}  // namespace ledger::cli
