// The moment a request asks about, from the `{TIME}` of `/at/{TIME}/...` or
// a web view's `at=`: an RFC 3339 time, `seq:N`, or `now`.
//
// Functions only. Throws ApiError (400) for text that is none of these, a
// seq past the ledger's end, or a time outside what the ledger can hold.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ledger/ledger.h"

namespace ledger::serve {

struct Moment {
  std::uint64_t seq = 0;    // the last record at or before the moment
  std::int64_t timeNs = 0;  // the moment itself (AGE is counted to it)
  bool now = false;         // `now`: follows the ledger as it grows
};

// `nowNs`: the wall clock, for `now`. A time before the ledger's first
// record is an ApiError (400): the ledger observed nothing then. (The paths
// that name no object, /version, /api, /apis, do not ask: kube_api.h.)
Moment resolveMoment(std::string_view text, const Ledger& ledger, std::int64_t nowNs);

// Whether `text` (a moment as resolveMoment reads it) is before the cut of a
// cut ledger (ledger-replay archive): seq:N below the cut's seq, or a time
// before the cut's last record's, as the CLI's --archive chooses the archive.
// False for `now`, for text that is none of these and on a ledger not cut.
bool momentBeforeCut(std::string_view text, const Ledger& ledger);

// The Warning header ("299 - \"...\"") for a request under /at/{TIME}/
// whose moment lies in a gap of the ledger's observation, else "". Never
// throws for a bad moment (the request itself answers that); throws
// ReplayError when the ledger cannot be read.
std::string momentWarning(std::string_view path, const Ledger& ledger, std::int64_t nowNs);

}  // namespace ledger::serve
