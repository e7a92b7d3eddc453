#include "tools/time_flags.h"

#include <cctype>
#include <memory>

#include "schema/k8s/rfc3339.h"
#include "tools/program.h"

namespace ledger::cli {

namespace {

constexpr std::int64_t kSecond = 1000000000;

const char* const kTimeForms =
    "an RFC 3339 time (2026-11-29T10:00:00Z), a date (2026-11-29, midnight UTC), a time "
    "before now (-2h, -7d, -30m, -90s), 'now' or 'end' (the ledger's last record)";

// A duration of digits-and-unit parts ("1h30m"): `ns`, or why it is not
// one (`problem`), or `tooLong` when it passes the caller's maximum.
struct Duration {
  std::int64_t ns = 0;
  std::string problem;
  bool tooLong = false;
};

Duration parseDuration(const std::string& text, std::int64_t max) {
  Duration out;
  if (text.empty()) return {0, "is not a duration", false};
  for (std::size_t i = 0; i < text.size();) {
    std::size_t digits = i;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
      ++digits;
    }
    if (digits == i || digits == text.size() || digits - i > 9)
      return {0, "is not a duration", false};
    const std::int64_t n = std::stoll(text.substr(i, digits - i));
    std::int64_t unit = 0;
    switch (text[digits]) {
      case 's':
        unit = kSecond;
        break;
      case 'm':
        unit = 60 * kSecond;
        break;
      case 'h':
        unit = 3600 * kSecond;
        break;
      case 'd':
        unit = 24 * 3600 * kSecond;
        break;
      case 'w':
        unit = 7 * 24 * 3600 * kSecond;
        break;
      default:
        return {0, "has an unknown unit at byte " + std::to_string(digits + 1), false};
    }
    if (n > max / unit || out.ns > max - n * unit) return {0, "", true};
    out.ns += n * unit;
    i = digits + 1;
  }
  return out;
}

// "2026-11-20": the date's midnight UTC, through the RFC 3339 parser so
// that its rules (days of the month, range) hold.
bool isDate(const std::string& v) {
  if (v.size() != 10 || v[4] != '-' || v[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) return false;
  }
  return true;
}

UsageError notATime(const std::string& value, const char* flag, const std::string& why) {
  return UsageError(std::string(flag) + " '" + value + "' " + why + ": give " + kTimeForms);
}

UsageError outOfRange(const std::string& value, const char* flag) {
  return UsageError(std::string(flag) + " '" + value + "' is outside the ledger's time range " +
                    timeRangeText());
}

// "-2h": that long before the wall clock.
std::int64_t beforeNow(const std::string& value, const char* flag, TimeBeyondRange beyond) {
  const std::int64_t now = nowNs();
  // Unsigned: now less the earliest time spans more than int64 holds.
  const std::uint64_t reach =
      static_cast<std::uint64_t>(now) - static_cast<std::uint64_t>(kMinTimeNs);
  const auto max = static_cast<std::int64_t>(
      std::min<std::uint64_t>(reach, static_cast<std::uint64_t>(kMaxTimeNs)));
  const Duration d = parseDuration(value.substr(1), max);
  if (d.tooLong) {
    if (beyond == TimeBeyondRange::kClamp) return kMinTimeNs;
    throw outOfRange(value, flag);
  }
  if (!d.problem.empty()) throw notATime(value, flag, "is not a time before now");
  return now - d.ns;
}

}  // namespace

std::int64_t parseTimeArg(const std::string& value, const char* flag, TimeBeyondRange beyond,
                          const LedgerEnd& end) {
  if (value == "now") return nowNs();
  if (value == "end") {
    if (!end) throw UsageError(std::string(flag) + " 'end' names no ledger here: give a time");
    return end();
  }
  if (value.size() > 1 && value[0] == '-') return beforeNow(value, flag, beyond);
  bool beyondRange = false;
  const auto t = tryParseRfc3339(isDate(value) ? value + "T00:00:00Z" : value, &beyondRange);
  if (beyondRange && beyond == TimeBeyondRange::kClamp) {
    // Every record's time is in range, so the clamped moment falls after
    // (or before) all of them, which is what such a time asks for.
    return value.substr(0, 4) < "1970" ? kMinTimeNs : kMaxTimeNs;
  }
  if (beyondRange) throw outOfRange(value, flag);
  if (!t) throw notATime(value, flag, isDate(value) ? "is not a date" : "is not a time");
  return *t;
}

std::int64_t parseStepArg(const std::string& value, const char* flag) {
  constexpr std::int64_t kYear = 366 * 24 * 3600 * kSecond;
  const Duration d = parseDuration(value, kYear);
  std::string why = d.problem == "is not a duration" ? "is not a step" : d.problem;
  if (d.tooLong) why = "is longer than a year";
  if (why.empty() && d.ns == 0) why = "is zero";
  if (!why.empty()) {
    throw UsageError(std::string(flag) + " '" + value + "' " + why + " (e.g. 5m, 1h, 1d or 1h30m)");
  }
  return d.ns;
}

std::optional<std::int64_t> lastRecordTime(const Ledger& ledger) {
  const std::uint64_t last = ledger.lastSeq();
  std::int64_t timeNs = 0;
  if (last == 0) return std::nullopt;
  if (const Status st = ledger.timeOf(last, &timeNs); !st.isOk()) throw ProgramError(st);
  return timeNs;
}

LedgerEnd lastRecordEnd(std::function<const Ledger&()> open) {
  return [open = std::move(open)] {
    const auto t = lastRecordTime(open());
    if (!t) throw UsageError("'end' is the ledger's last record, and the ledger holds none");
    return *t;
  };
}

}  // namespace ledger::cli
