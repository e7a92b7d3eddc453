// The moment a request asks about, from the `{TIME}` of `/at/{TIME}/...` or
// a web view's `at=`: an RFC 3339 time, `seq:N`, or `now`.
//
// Functions only. Throws ApiError (400) for text that is none of these, a
// seq past the ledger's end, or a time outside what the ledger can hold.
#pragma once

#include <cstdint>
#include <string_view>

#include "ledger/ledger.h"

namespace ledger::serve {

struct Moment {
  std::uint64_t seq = 0;    // the last record at or before the moment
  std::int64_t timeNs = 0;  // the moment itself (AGE is counted to it)
  bool now = false;         // `now`: follows the ledger as it grows
};

// `nowNs`: the wall clock, for `now`.
Moment resolveMoment(std::string_view text, const Ledger& ledger, std::int64_t nowNs);

}  // namespace ledger::serve
