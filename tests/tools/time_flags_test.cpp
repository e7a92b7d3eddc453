// The forms a TIME flag takes (tools/time_flags.h): RFC 3339, a date, a
// time before now, `now`, `end`; and the errors, which name the flag and
// the forms.
#include "schema/k8s/rfc3339.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tools/cli.h"
#include "tools/query_commands.h"
#include "tools/render/coverage_format.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

constexpr std::int64_t kOneSecond = 1000000000;

std::int64_t instantOf(const std::string& t) { return *tryParseRfc3339(t); }

// `value` before now, read between two readings of the clock.
void checkBeforeNow(const std::string& value, std::int64_t ago) {
  INFO(value);
  const std::int64_t before = nowNs();
  const std::int64_t t = cli::parseTimeArg(value, "--from");
  const std::int64_t after = nowNs();
  CHECK(t >= before - ago);
  CHECK(t <= after - ago);
}

}  // namespace

TEST_CASE("TIME: RFC 3339, a date at midnight UTC, now", "[cli][time]") {
  CHECK(cli::parseTimeArg("2026-11-20T10:00:00+02:00", "--from") ==
        instantOf("2026-11-20T08:00:00Z"));
  CHECK(cli::parseTimeArg("2026-11-20", "--from") == instantOf("2026-11-20T00:00:00Z"));
  CHECK(cli::parseTimeArg("2024-02-29", "--to") == instantOf("2024-02-29T00:00:00Z"));
  const std::int64_t before = nowNs();
  const std::int64_t now = cli::parseTimeArg("now", "--to");
  CHECK(now >= before);
  CHECK(now <= nowNs());
}

TEST_CASE("TIME: -2h, -7d, -30m, -90s and joined units are before now", "[cli][time]") {
  checkBeforeNow("-2h", 2 * 3600 * kOneSecond);
  checkBeforeNow("-7d", 7 * 86400 * kOneSecond);
  checkBeforeNow("-30m", 30 * 60 * kOneSecond);
  checkBeforeNow("-90s", 90 * kOneSecond);
  checkBeforeNow("-1h30m", 90 * 60 * kOneSecond);
  checkBeforeNow("-2w", 14 * 86400 * kOneSecond);
  // Before the ledger's range: a period's bound is refused, a moment clamped.
  CHECK_THROWS_WITH(cli::parseTimeArg("-999999999w", "--from"),
                    Catch::Contains("is outside the ledger's time range"));
  CHECK(cli::parseTimeArg("-999999999w", "--at", cli::TimeBeyondRange::kClamp) == kMinTimeNs);
}

TEST_CASE("TIME: end is the ledger's last record", "[cli][time]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  int opened = 0;
  const cli::LedgerEnd end = cli::lastRecordEnd([&]() -> const Ledger& {
    ++opened;
    return *ledger;
  });
  CHECK_THROWS_WITH(cli::parseTimeArg("end", "--to", cli::TimeBeyondRange::kReject, end),
                    Catch::Contains("the ledger holds none"));
  ingestText(*ledger, event("ADDED", k8s::resourceFlavor("default"), "2026-11-20T09:15:00Z"));
  CHECK(cli::parseTimeArg("end", "--to", cli::TimeBeyondRange::kReject, end) ==
        instantOf("2026-11-20T09:15:00Z"));
  CHECK(opened == 2);
  // Other forms never open the ledger.
  cli::parseTimeArg("2026-11-20", "--from", cli::TimeBeyondRange::kReject, end);
  CHECK(opened == 2);
  // Without a ledger, `end` is refused, naming the flag.
  CHECK_THROWS_WITH(cli::parseTimeArg("end", "--until"), Catch::StartsWith("--until 'end'"));
}

TEST_CASE("TIME: bad input names the flag and the forms", "[cli][time]") {
  for (const char* bad : {"yesterday", "2026-11-31", "2026-1-20", "-2", "-2y", "-h", "--2h",
                          "2026-11-20T25:00:00Z", "", "End", "-"}) {
    INFO(bad);
    try {
      cli::parseTimeArg(bad, "--from");
      FAIL("accepted");
    } catch (const cli::UsageError& e) {
      const std::string what = e.what();
      CHECK_THAT(what, Catch::StartsWith(std::string("--from '") + bad + "' "));
      CHECK_THAT(what, Catch::Contains("a date (2026-11-29, midnight UTC)"));
      CHECK_THAT(what, Catch::Contains("-2h, -7d, -30m, -90s"));
      CHECK_THAT(what, Catch::Contains("'now' or 'end'"));
      CHECK(e.code() == cli::kExitUsage);
    }
  }
  CHECK_THROWS_WITH(cli::parseTimeArg("2026-11-31", "--to"), Catch::Contains("is not a date"));
  CHECK_THROWS_WITH(cli::parseTimeArg("10000-01-01", "--to"),
                    Catch::Contains("is not a time: give an RFC 3339 time"));
}

TEST_CASE("STEP: its forms and errors (the parser relative times share)", "[cli][time]") {
  CHECK(cli::parseStepArg("1h30m", "--step") == 90 * 60 * kOneSecond);
  CHECK(cli::parseStepArg("1w", "--step") == 7 * 86400 * kOneSecond);
  CHECK_THROWS_WITH(cli::parseStepArg("0s", "--step"), Catch::Contains("is zero"));
  CHECK_THROWS_WITH(cli::parseStepArg("367d", "--step"), Catch::Contains("longer than a year"));
  CHECK_THROWS_WITH(cli::parseStepArg("5x", "--step"), Catch::Contains("unknown unit at byte 2"));
  CHECK_THROWS_WITH(cli::parseStepArg("h", "--step"), Catch::Contains("is not a step"));
}

TEST_CASE("a duration for people", "[cli][time]") {
  CHECK(render::durationText(0) == "0s");
  CHECK(render::durationText(kOneSecond / 2) == "0s");
  CHECK(render::durationText(90 * kOneSecond) == "1m 30s");
  CHECK(render::durationText((20 * 86400 + 3600 + 5) * kOneSecond) == "20d 1h 5s");
}
