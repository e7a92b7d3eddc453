// The usage_rollups family as the storage layer keeps it: checksummed
// payloads read back in key order, damage reported as corruption, and the
// family added to a ledger of format 3.
#include <capnp/common.h>

#include "ledger/format.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

// A payload of whole words, as a Cap'n Proto message is.
std::string words(char fill, std::size_t count) { return std::string(8 * count, fill); }

std::map<std::string, std::string> scanAll(const Ledger& ledger, Status* status = nullptr) {
  std::map<std::string, std::string> out;
  Status st =
      ledger.scanUsageRollups(std::string(1, '\0'), std::string(1, '\xff'),
                              [&](std::string_view key, kj::ArrayPtr<const capnp::word> payload) {
                                auto bytes = payload.asBytes();
                                out[std::string(key)] = std::string(
                                    reinterpret_cast<const char*>(bytes.begin()), bytes.size());
                                return true;
                              });
  if (status != nullptr) {
    *status = st;
  } else {
    REQUIRE(st.isOk());
  }
  return out;
}

}  // namespace

TEST_CASE("usage rollups are stored with a checksum and read in key order", "[ledger][rollups]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const std::string h1 = format::usageRollupKey('h', 3600), h0 = format::usageRollupKey('h', 0);
  const std::string d0 = format::usageRollupKey('d', 0);
  const std::string before = format::usageRollupKey('h', -3600);
  REQUIRE(ledger
              ->putUsageRollups({{h1, words('b', 2)},
                                 {h0, words('a', 1)},
                                 {d0, words('d', 3)},
                                 {before, words('z', 1)}})
              .isOk());
  // Times before 1970 sort before later ones, as in the time index.
  const auto all = scanAll(*ledger);
  REQUIRE(all.size() == 4);
  CHECK(std::next(all.begin(), 1)->first == before);  // after the day, before hour 0
  CHECK(all.at(h0) == words('a', 1));
  CHECK(format::usageRollupStart(before) == -3600);
  std::string last;
  REQUIRE(ledger->lastUsageRollup('h', &last).isOk());
  CHECK(last == h1);
  REQUIRE(ledger->lastUsageRollup('m', &last).isOk());
  CHECK(last.empty());

  SECTION("a range stops at its end, and fn can stop it") {
    std::vector<std::string> seen;
    REQUIRE(ledger
                ->scanUsageRollups(h0, h1,
                                   [&](std::string_view key, auto) {
                                     seen.emplace_back(key);
                                     return true;
                                   })
                .isOk());
    CHECK(seen == std::vector<std::string>{h0});
  }
  SECTION("a flipped byte or a torn payload is corruption naming the bucket") {
    std::string raw;
    REQUIRE(ledger->getRaw(format::kUsageRollupsFamily, h1, &raw).isOk());
    raw[raw.size() - 1] ^= 1;
    REQUIRE(ledger->putRawForTesting(format::kUsageRollupsFamily, h1, raw).isOk());
    Status st;
    scanAll(*ledger, &st);
    CHECK(st.isCorruption());
    CHECK(st.toString().find("usage rollup h/3600 fails its checksum") != std::string::npos);
    REQUIRE(ledger->putRawForTesting(format::kUsageRollupsFamily, h1, raw.substr(0, 13)).isOk());
    scanAll(*ledger, &st);
    CHECK(st.toString().find("not a whole number of words") != std::string::npos);
  }
  SECTION("drop removes them all") {
    REQUIRE(ledger->dropUsageRollups().isOk());
    CHECK(scanAll(*ledger).empty());
  }
}

TEST_CASE("a format-3 ledger gets usage_rollups when opened for writing", "[ledger][rollups]") {
  TempDir dir;
  {
    auto ledger = openLedger(dir.path("l"));
    CHECK(ledger->formatVersion() == format::kCurrentFormat);
  }
  // What format 3 wrote: no usage_rollups family, format "3".
  makeEarlierFormat(dir.path("l"), "3", {format::kUsageRollupsFamily});
  {
    Ledger::Options ro;
    ro.readOnly = true;
    std::unique_ptr<Ledger> ledger;
    REQUIRE(Ledger::open(dir.path("l"), ro, &ledger).isOk());
    CHECK(ledger->formatVersion() == 3);
    CHECK(scanAll(*ledger).empty());
    std::string last = "x";
    REQUIRE(ledger->lastUsageRollup('h', &last).isOk());
    CHECK(last.empty());
  }
  auto ledger = openLedger(dir.path("l"));
  CHECK(ledger->formatVersion() == format::kCurrentFormat);
  REQUIRE(ledger->putUsageRollups({{format::usageRollupKey('h', 0), words('a', 1)}}).isOk());
  CHECK(scanAll(*ledger).size() == 1);
}
