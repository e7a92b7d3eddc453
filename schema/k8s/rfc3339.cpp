#include "schema/k8s/rfc3339.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace ledger {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civilFromDays(std::int64_t z, std::int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<std::int64_t>(yoe) + era * 400 + (*m <= 2);
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, unsigned* out) {
  if (pos + n > s.size()) return false;
  unsigned v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  *out = v;
  return true;
}

bool leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

}  // namespace

std::optional<std::int64_t> tryParseRfc3339(std::string_view s, bool* outOfRange) {
  if (outOfRange != nullptr) *outOfRange = false;
  unsigned year, month, day, hour, minute, second;
  if (!digits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, &month) ||
      s[7] != '-' || !digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !digits(s, 11, 2, &hour) || s[13] != ':' || !digits(s, 14, 2, &minute) || s[16] != ':' ||
      !digits(s, 17, 2, &second)) {
    return std::nullopt;
  }
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  if (day > kDays[month - 1] + (month == 2 && leap(year) ? 1 : 0)) return std::nullopt;
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int n = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (n < 9) {
        nanos = nanos * 10 + (s[pos] - '0');
        ++n;
      }
      ++pos;
    }
    if (n == 0) return std::nullopt;
    for (; n < 9; ++n) nanos *= 10;
  }
  std::int64_t offsetSeconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    unsigned oh, om;
    if (!digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offsetSeconds = (s[pos] == '+' ? 1 : -1) * static_cast<std::int64_t>(oh * 3600 + om * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  if (second == 60) second = 59;  // leap second: Kubernetes (Go) clamps the same way
  const std::int64_t days = daysFromCivil(year, month, day);
  // Years 0000-9999 keep seconds within +-2^38; ns need 128 bits before the
  // range check (9999-12-31 is 2.5e20 ns, past int64's 9.2e18).
  const std::int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds;
  __extension__ const __int128 ns = static_cast<__int128>(secs) * 1000000000 + nanos;
  if (ns < kMinTimeNs || ns > kMaxTimeNs) {
    if (outOfRange != nullptr) *outOfRange = true;
    return std::nullopt;
  }
  return static_cast<std::int64_t>(ns);
}

std::string timeRangeText() {
  return "(" + formatRfc3339(kMinTimeNs) + " to " + formatRfc3339(kMaxTimeNs) + ")";
}

namespace {

// "YYYY-MM-DDThh:mm:ss" and the nanoseconds past that second.
std::string wholeSeconds(std::int64_t timeNs, std::int64_t* nanos) {
  std::int64_t secs = timeNs / 1000000000LL;
  *nanos = timeNs % 1000000000LL;
  if (*nanos < 0) {
    *nanos += 1000000000LL;
    --secs;
  }
  std::int64_t days = secs / 86400;
  std::int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  std::int64_t y;
  unsigned m, d;
  civilFromDays(days, &y, &m, &d);
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d",
                        static_cast<long long>(y), m, d, static_cast<int>(rem / 3600),
                        static_cast<int>(rem / 60 % 60), static_cast<int>(rem % 60));
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string nineDigits(std::int64_t nanos) {
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%09lld", static_cast<long long>(nanos));
  return frac;
}

}  // namespace

std::string formatRfc3339(std::int64_t timeNs) {
  std::int64_t nanos = 0;
  std::string out = wholeSeconds(timeNs, &nanos);
  if (nanos != 0) {
    std::string f = nineDigits(nanos);
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  out += 'Z';
  return out;
}

std::string formatRfc3339Fixed(std::int64_t timeNs, int fractionDigits) {
  std::int64_t nanos = 0;
  std::string out = wholeSeconds(timeNs, &nanos);
  if (fractionDigits > 0) out += nineDigits(nanos).substr(0, 1 + std::min(fractionDigits, 9));
  out += 'Z';
  return out;
}

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace ledger
