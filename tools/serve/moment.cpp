#include "tools/serve/moment.h"

#include <charconv>
#include <optional>
#include <string>

#include "replay/fold/observations.h"
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
  // Before its first record the ledger saw nothing: an empty answer would
  // say the cluster was empty (docs/reference.md "Observation").
  if (m.seq == 0 && ledger.lastSeq() != 0) {
    std::int64_t first = 0;
    throwIfFailed(ledger.timeOf(1, &first));
    throw ApiError::badRequest("moment '" + std::string(text) +
                               "' is before the ledger's first record (" + formatRfc3339(first) +
                               "): it observed nothing then");
  }
  return m;
}

bool momentBeforeCut(std::string_view text, const Ledger& ledger) {
  const std::optional<ArchiveCut> cut = ledger.archiveCut();
  if (!cut || text == "now") return false;
  if (text.starts_with("seq:")) {
    const std::string_view digits = text.substr(4);
    std::uint64_t seq = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
    return ec == std::errc() && end == digits.data() + digits.size() && seq < cut->seq;
  }
  bool outOfRange = false;
  const auto t = tryParseRfc3339(text, &outOfRange);
  return t && *t < cut->timeNs;
}

std::string momentWarning(std::string_view path, const Ledger& ledger, std::int64_t nowNs) {
  if (!path.starts_with("/at/")) return {};
  const auto end = path.find('/', 4);
  const std::string_view text = path.substr(4, end == std::string_view::npos ? end : end - 4);
  std::int64_t at = 0;
  try {
    const Moment m = resolveMoment(text, ledger, nowNs);
    if (m.now) return {};
    at = m.timeNs;
  } catch (const ApiError&) {
    return {};
  }
  const auto coverage = replay::coverageOf(ledger, at, replay::momentEnd(at));
  const replay::ObservationGap* gap = replay::gapAt(coverage, at);
  // RFC 7234's Warning header, code 299 (miscellaneous persistent warning),
  // as the API server sends deprecation warnings: kubectl prints the text.
  return gap == nullptr ? std::string()
                        : "299 - \"this moment is in a gap: " + replay::describeGap(*gap) + "\"";
}

}  // namespace ledger::serve
