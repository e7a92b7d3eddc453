// scanProjectionAhead: the same records as Ledger::scanProjectionWords, in
// order and byte for byte, across batch boundaries and for a record larger
// than a batch; stopping early, a record that does not decode and an
// exception from the caller all end the scan with the reader joined.
#include "replay/fold/scan_ahead.h"

#include "ledger/format.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

using Seen = std::vector<std::pair<std::uint64_t, std::string>>;

std::string bytesOf(kj::ArrayPtr<const capnp::word> w) {
  auto b = w.asBytes();
  return std::string(reinterpret_cast<const char*>(b.begin()), b.size());
}

}  // namespace

TEST_CASE("a scan ahead gives what a plain scan gives", "[scan-ahead]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  // About 3 MiB of projections: several batches.
  std::string stream;
  const std::string padding(2000, 'x');
  for (int i = 0; i < 1500; ++i) {
    stream +=
        R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns-)" +
        std::to_string(i) + R"(","uid":"u-)" + std::to_string(i) +
        R"(","resourceVersion":"1","labels":{"pad":")" + padding + R"("}}}})" + "\n";
  }
  ingestText(*ledger, stream);
  REQUIRE(ledger->lastSeq() == 1500);
  // A record larger than a batch (1 MiB), stored directly after the last.
  const std::string big(3 << 20, '\x5a');
  REQUIRE(ledger->putRawForTesting(format::kProjectionFamily, format::seqKey(1501), big).isOk());

  auto collect = [&](bool ahead, std::uint64_t from, std::uint64_t to) {
    Seen seen;
    auto fn = [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
      seen.emplace_back(seq, bytesOf(w));
      return true;
    };
    Status st = ahead ? replay::scanProjectionAhead(*ledger, from, to, fn)
                      : ledger->scanProjectionWords(from, to, fn);
    REQUIRE(st.isOk());
    return seen;
  };
  const Seen plain = collect(false, 1, 0);
  REQUIRE(plain.size() == 1501);
  std::size_t total = 0;
  for (const auto& [seq, bytes] : plain) total += bytes.size();
  CHECK(total > (5u << 20));
  CHECK(collect(true, 1, 0) == plain);
  CHECK(collect(true, 700, 1200) == collect(false, 700, 1200));
  CHECK(collect(true, 1501, 1501).at(0).second.size() >= big.size());

  SECTION("the caller stops early") {
    std::uint64_t last = 0;
    Status st = replay::scanProjectionAhead(*ledger, 1, 0, [&](std::uint64_t seq, auto) {
      last = seq;
      return seq < 10;
    });
    CHECK(st.isOk());
    CHECK(last == 10);
  }
  SECTION("a kj::Exception from the caller is corruption at its seq") {
    Status st = replay::scanProjectionAhead(*ledger, 1, 0, [&](std::uint64_t seq, auto) {
      if (seq == 1234) KJ_FAIL_REQUIRE("bad record");
      return true;
    });
    CHECK(st.isCorruption());
    CHECK_THAT(st.message(), Catch::Contains("seq 1234"));
  }
  SECTION("another exception propagates, after the reader stopped") {
    CHECK_THROWS_AS(replay::scanProjectionAhead(*ledger, 1, 0,
                                                [&](std::uint64_t seq, auto) -> bool {
                                                  if (seq == 900) throw std::runtime_error("x");
                                                  return true;
                                                }),
                    std::runtime_error);
  }
}
