#include "tools/serve/moment.h"

#include <charconv>
#include <string>

#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"

namespace ledger::serve {

Moment resolveMoment(std::string_view text, const Ledger& ledger, std::int64_t nowNs) {
  Moment m;
  if (text == "now") {
    m.now = true;
    m.seq = ledger.lastSeq();
    m.timeNs = nowNs;
    return m;
  }
  if (text.starts_with("seq:")) {
    const std::string_view digits = text.substr(4);
    std::uint64_t seq = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      throw ApiError::badRequest("moment '" + std::string(text) +
                                 "': seq:N needs a whole number of records");
    }
    if (seq > ledger.lastSeq()) {
      throw ApiError::badRequest("moment '" + std::string(text) + "': the ledger ends at seq " +
                                 std::to_string(ledger.lastSeq()));
    }
    m.seq = seq;
    if (seq > 0) throwIfFailed(ledger.timeOf(seq, &m.timeNs));
    return m;
  }
  bool outOfRange = false;
  auto t = tryParseRfc3339(text, &outOfRange);
  if (!t) {
    throw ApiError::badRequest(
        "moment '" + std::string(text) + "' is not an RFC 3339 time (2026-11-20T09:00:00Z), " +
        (outOfRange ? "within " + timeRangeText() + ", " : std::string()) + "seq:N or now");
  }
  m.timeNs = *t;
  throwIfFailed(ledger.seqAtOrBefore(*t, &m.seq));
  return m;
}

}  // namespace ledger::serve
