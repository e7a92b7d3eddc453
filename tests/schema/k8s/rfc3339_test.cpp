// RFC 3339 date-times (section 5.6) to and from the ledger's int64 ns: what
// the RFC allows is read, and what int64 cannot hold is out of range instead
// of wrapping to another century.
#include <catch2/catch.hpp>
#include <limits>

#include "schema/k8s/rfc3339.h"

using namespace ledger;

TEST_CASE("RFC 3339: fractions of any length, offsets, and the range's exact ends", "[time]") {
  CHECK(tryParseRfc3339("1970-01-01T00:00:00Z") == 0);
  // Digits past the ninth are truncated (the ledger keeps ns).
  CHECK(tryParseRfc3339("1970-01-01T00:00:01.1234567899999Z") == 1123456789);
  CHECK(tryParseRfc3339("1970-01-01T02:00:00+02:00") == 0);
  CHECK(tryParseRfc3339("1970-01-01t00:00:00z") == 0);
  const auto max = std::numeric_limits<std::int64_t>::max();
  const auto min = std::numeric_limits<std::int64_t>::min();
  CHECK(tryParseRfc3339("2262-04-11T23:47:16.854775807Z") == max);
  CHECK(tryParseRfc3339("1677-09-21T00:12:43.145224192Z") == min);
  CHECK(formatRfc3339(max) == "2262-04-11T23:47:16.854775807Z");
  CHECK(formatRfc3339(min) == "1677-09-21T00:12:43.145224192Z");
}

TEST_CASE("RFC 3339: valid times outside int64 ns are out of range, never wrapped", "[time]") {
  // 9999-12-31 used to come back as 1816-03-30.
  for (const char* text :
       {"9999-12-31T23:59:59Z", "2262-04-11T23:47:16.854775808Z", "1677-09-21T00:12:43.145224191Z",
        "0000-01-01T00:00:00Z", "2262-04-12T00:00:00+00:01", "3000-01-01T00:00:00.5-23:59"}) {
    INFO(text);
    CHECK_FALSE(tryParseRfc3339(text).has_value());
    bool outOfRange = false;
    CHECK_FALSE(tryParseRfc3339(text, &outOfRange).has_value());
    CHECK(outOfRange);
  }
  bool outOfRange = true;
  CHECK_FALSE(tryParseRfc3339("2026-13-01T00:00:00Z", &outOfRange).has_value());
  CHECK_FALSE(outOfRange);  // malformed, not out of range
  CHECK(timeRangeText() == "(1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z)");
}
