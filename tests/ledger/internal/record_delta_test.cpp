// Log records as deltas (ledger/internal/record_delta.h): the codec's round
// trip, which base the appender picks and when it stores a record whole, and
// the bases a scan keeps.
#include "ledger/internal/record_delta.h"

#include <catch2/catch.hpp>
#include <string>

#include "ledger/format.h"

using namespace ledger;

namespace record_delta_test {

std::string version(int n) {
  std::string json = R"({"kind":"Pod","metadata":{"name":"p","resourceVersion":")" +
                     std::to_string(n) + R"("},"spec":{)";
  for (int i = 0; i < 40; ++i) json += "\"field" + std::to_string(i) + "\":\"the same value\",";
  return json + R"("phase":"Running"}})";
}

std::string decoded(std::string_view base, std::string_view body) {
  DeltaBody delta;
  REQUIRE(parseDeltaBody(body, &delta));
  DeltaCodec codec;
  std::string out;
  const Status st = codec.decode(base, delta.frame, &out);
  INFO(st.toString());
  REQUIRE(st.isOk());
  return out;
}

}  // namespace record_delta_test

using namespace record_delta_test;

TEST_CASE("a delta decodes against its base to the record's bytes, and only against it",
          "[delta]") {
  DeltaCodec codec;
  const std::string base = version(1), record = version(2);
  const std::string body(codec.encode(7, base, record));
  CHECK(body.size() < record.size() / 4);
  DeltaBody delta;
  REQUIRE(parseDeltaBody(body, &delta));
  CHECK(delta.baseSeq == 7);
  CHECK(decoded(base, body) == record);

  std::string out;
  CHECK(codec.decode("another base", delta.frame, &out).isCorruption());
  CHECK(codec.decode(base, delta.frame.substr(0, delta.frame.size() / 2), &out).isCorruption());
  // A LogRecord message starts with its segment count, never the marker.
  CHECK_FALSE(parseDeltaBody(std::string("\0\0\0\0\x10\0\0\0", 8) + record, &delta));
}

TEST_CASE("the appender stores an object's record against its previous one or its kind's last",
          "[delta]") {
  DeltaBases bases;
  const std::string v1 = version(1), v2 = version(2), q1 = version(3);
  CHECK(bases.body(1, "/Pod/ns/p", v1, 0) == v1);  // nothing of its kind yet
  std::string body(bases.body(2, "/Pod/ns/p", v2, 0));
  DeltaBody delta;
  REQUIRE(parseDeltaBody(body, &delta));
  CHECK(delta.baseSeq == 1);
  CHECK(decoded(v1, body) == v2);
  // A new object of the kind: against the kind's last record.
  body = bases.body(3, "/Pod/ns/q", q1, 0);
  REQUIRE(parseDeltaBody(body, &delta));
  CHECK(delta.baseSeq == 2);
  CHECK(decoded(v2, body) == q1);
  // Another kind has no base.
  CHECK(bases.body(4, "/ConfigMap/ns/p", v1, 0) == v1);
}

TEST_CASE("the appender stores a record whole past the floor, the window or the depth", "[delta]") {
  DeltaBases bases;
  DeltaBody delta;
  const std::string first = version(1);  // body() may return a view of it
  CHECK_FALSE(parseDeltaBody(bases.body(10, "/Pod/ns/p", first, 0), &delta));
  // A cut at or after the base: stored whole.
  CHECK_FALSE(parseDeltaBody(bases.body(11, "/Pod/ns/p", version(2), 10), &delta));
  // More than the window after it: stored whole.
  const std::uint64_t far = 11 + format::kDeltaWindow + 1;
  CHECK_FALSE(parseDeltaBody(bases.body(far, "/Pod/ns/p", version(3), 0), &delta));
  // A chain of deltas is at most kDeltaMaxDepth long.
  std::uint64_t seq = far;
  for (std::uint32_t i = 1; i <= format::kDeltaMaxDepth; ++i) {
    CHECK(parseDeltaBody(bases.body(++seq, "/Pod/ns/p", version(static_cast<int>(i + 3)), 0),
                         &delta));
  }
  CHECK_FALSE(parseDeltaBody(bases.body(++seq, "/Pod/ns/p", version(99), 0), &delta));
  CHECK(parseDeltaBody(bases.body(++seq, "/Pod/ns/p", version(100), 0), &delta));
  // After clear() (a failed append) nothing is a base.
  bases.clear();
  CHECK_FALSE(parseDeltaBody(bases.body(++seq, "/Pod/ns/p", version(101), 0), &delta));
}

TEST_CASE("a scan keeps the records within the window", "[delta]") {
  RecentRecords recent;
  recent.keep(1, "one");
  recent.keep(2, "two");
  REQUIRE(recent.find(1) != nullptr);
  CHECK(*recent.find(1) == "one");
  CHECK(recent.find(3) == nullptr);
  recent.keep(2 + format::kDeltaWindow, "far");
  CHECK(recent.find(1) == nullptr);
  REQUIRE(recent.find(2) != nullptr);
  CHECK(*recent.find(2) == "two");
  CHECK(*recent.find(2 + format::kDeltaWindow) == "far");
}

TEST_CASE("a scan's kept records hold at most its memory budget", "[delta]") {
  RecentRecords recent;
  const std::string big(1 << 20, 'x');
  // A record far larger than the rest leaves no large string behind when
  // its place is reused for a small one.
  recent.keep(1, big);
  recent.keep(2 + format::kDeltaWindow, "small");
  REQUIRE(recent.find(1) == nullptr);
  REQUIRE(recent.find(2 + format::kDeltaWindow) != nullptr);
  CHECK(recent.find(2 + format::kDeltaWindow)->capacity() < 1024);
  CHECK(recent.bytesHeld() < 1024);
  // 100 records of 1 MiB: the oldest leave, the newest stay, within budget.
  for (std::uint64_t seq = 3 + format::kDeltaWindow; seq < 103 + format::kDeltaWindow; ++seq) {
    recent.keep(seq, big);
    CHECK(recent.bytesHeld() <= RecentRecords::kBudget + 2 * big.size());
  }
  CHECK(recent.find(3 + format::kDeltaWindow) == nullptr);
  REQUIRE(recent.find(102 + format::kDeltaWindow) != nullptr);
  CHECK(*recent.find(102 + format::kDeltaWindow) == big);
}

TEST_CASE("the appender keeps the newest objects' records within its memory budget", "[delta]") {
  DeltaBases bases;
  // 96 objects of 512 KiB: more than the appender keeps (32 MiB).
  const std::string big(512 << 10, 'x');
  for (std::uint64_t i = 1; i <= 96; ++i) {
    (void)bases.body(i, "/Pod/ns/o" + std::to_string(i), big + std::to_string(i), 0);
  }
  DeltaBody delta;
  // The newest object's next record is stored against it...
  REQUIRE(parseDeltaBody(bases.body(97, "/Pod/ns/o96", big + "96 again", 0), &delta));
  CHECK(delta.baseSeq == 96);
  // ...the oldest one's was dropped: against its kind's last record.
  REQUIRE(parseDeltaBody(bases.body(98, "/Pod/ns/o1", big + "1 again", 0), &delta));
  CHECK(delta.baseSeq == 97);
}
