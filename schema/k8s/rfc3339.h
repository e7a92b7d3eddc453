// RFC 3339 timestamps as Kubernetes writes them ("2026-11-29T10:00:00Z",
// fractional seconds and numeric offsets allowed), to and from ns since the
// Unix epoch (UTC).
//
// Accepts every RFC 3339 date-time (section 5.6): years 0000-9999, a
// fraction of the second of any length (digits past the ninth truncated, the
// ledger keeps ns), 'Z' or a numeric offset, 'T', 't' or ' ' between date and
// time, a leap second (clamped to :59, as Go's time package does).
// The ledger's time is int64 ns since the epoch, so a valid date-time outside
// [kMinTimeNs, kMaxTimeNs] (1677-09-21T00:12:43.145224192Z to
// 2262-04-11T23:47:16.854775807Z) has no representation: it is reported as
// out of range, never wrapped.
//
// Pure functions but nowNs, which reads the system clock; all thread-safe.
// tryParseRfc3339 returns nullopt on anything that is not a valid RFC 3339
// date-time in that range; formatRfc3339 and nowNs never fail.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace ledger {

inline constexpr std::int64_t kMinTimeNs = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t kMaxTimeNs = std::numeric_limits<std::int64_t>::max();

// nullopt for a malformed text and for one out of range; `outOfRange`, when
// given, tells the two apart (true: a valid date-time beyond the range).
std::optional<std::int64_t> tryParseRfc3339(std::string_view text, bool* outOfRange = nullptr);
// "(1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z)", for
// messages about a time out of range.
std::string timeRangeText();
// UTC with 'Z'; fractional seconds only when non-zero, without trailing zeros.
std::string formatRfc3339(std::int64_t timeNs);
// UTC with 'Z' and exactly `fractionDigits` (0..9) digits of the second,
// truncated, as the API server writes its timestamps (0: whole seconds,
// 3: milliseconds, 6: metav1.MicroTime).
std::string formatRfc3339Fixed(std::int64_t timeNs, int fractionDigits);
// The system clock now, in the ledger's time (ns since the epoch, UTC).
std::int64_t nowNs();

}  // namespace ledger
