// RFC 3339 timestamps as Kubernetes writes them ("2026-11-29T10:00:00Z",
// fractional seconds and numeric offsets allowed), to and from ns since the
// Unix epoch (UTC).
//
// Pure functions; thread-safe. tryParseRfc3339 returns nullopt on anything
// that is not a valid RFC 3339 date-time; formatRfc3339 never fails.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ledger {

std::optional<std::int64_t> tryParseRfc3339(std::string_view text);
// UTC with 'Z'; fractional seconds only when non-zero, without trailing zeros.
std::string formatRfc3339(std::int64_t timeNs);
// UTC with 'Z' and exactly `fractionDigits` (0..9) digits of the second,
// truncated, as the API server writes its timestamps (0: whole seconds,
// 3: milliseconds, 6: metav1.MicroTime).
std::string formatRfc3339Fixed(std::int64_t timeNs, int fractionDigits);

}  // namespace ledger
