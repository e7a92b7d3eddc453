// Log records stored as deltas (format.h, kDeltaMarker; ledger/ledger_deltas.cpp):
// every reader gets the bytes that were hashed, whichever record a scan
// starts at; a failed append leaves no base behind; a cut leaves no record
// stored against one that left; a damaged base is named.
#include <catch2/catch.hpp>

#include "ledger/format.h"
#include "ledger/internal/record_delta.h"
#include "ledger/verify.h"
#include "replay/fold/checkpoints.h"
#include "tests/tamper_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace ledger_deltas_test {

// Each record stored as a delta, with its base's seq.
std::map<std::uint64_t, std::uint64_t> storedDeltas(const Ledger& ledger) {
  std::map<std::uint64_t, std::uint64_t> out;
  REQUIRE(ledger
              .scanRaw(format::kLogFamily,
                       [&](std::string_view key, std::string_view value) {
                         DeltaBody delta;
                         if (parseDeltaBody(value.substr(format::kHashSize), &delta))
                           out[format::decodeU64(key)] = delta.baseSeq;
                       })
              .isOk());
  return out;
}

std::vector<std::string> jsonFrom(const Ledger& ledger, std::uint64_t from) {
  std::vector<std::string> out;
  REQUIRE(ledger
              .scanRecords(from, 0,
                           [&](const Record& r, const Digest&) {
                             out.push_back(r.objectJson);
                             return true;
                           })
              .isOk());
  return out;
}

// `derived`: the projections and dedupe keys are the ingester's.
void requireDeltasSound(const Ledger& ledger, bool derived = true) {
  VerifyReport report;
  const Status st = derived ? verifyLog(ledger, &report, tamper::ingestDerivations())
                            : verifyLog(ledger, &report);
  INFO(st.toString());
  REQUIRE(st.isOk());
  INFO(report.problem);
  CHECK(report.ok());
}

PendingRecord pod(const std::string& name, int rv, std::string projection = "") {
  PendingRecord p;
  p.timeNs = 1000 + rv;
  p.identity = {"", "v1", "Pod", "ns", name, "uid-" + name, std::to_string(rv)};
  p.objectJson = R"({"kind":"Pod","metadata":{"name":")" + name + R"(","resourceVersion":")" +
                 std::to_string(rv) + R"("},"spec":{"containers":[{"name":"main","image":")" +
                 std::string(200, 'x') + R"("}]}})";
  p.projection = std::move(projection);
  return p;
}

}  // namespace ledger_deltas_test

using namespace ledger_deltas_test;

TEST_CASE("records stored as deltas read back as the bytes that were hashed", "[delta]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  const auto deltas = storedDeltas(*ledger);
  REQUIRE(deltas.size() > ledger->lastSeq() / 2);  // the format is in use
  requireDeltasSound(*ledger);                     // every delta hashes to its record's stored hash

  const std::vector<std::string> all = jsonFrom(*ledger, 1);
  REQUIRE(all.size() == ledger->lastSeq());
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    Record r;
    REQUIRE(ledger->read(seq, &r).isOk());
    CHECK(r.objectJson == all[seq - 1]);
  }
  // A scan from any record reads the bases before it.
  for (const auto& [seq, base] : deltas) {
    if (seq % 7 != 0) continue;
    const std::vector<std::string> tail = jsonFrom(*ledger, seq);
    CHECK(tail == std::vector<std::string>(all.begin() + static_cast<long>(seq - 1), all.end()));
  }
  // The same after a reopen, and from a reader.
  ledger.reset();
  Ledger::Options ro;
  ro.readOnly = true;
  auto reader = openLedger(dir.path("l"), ro);
  CHECK(reader->formatVersion() == format::kCurrentFormat);
  CHECK(jsonFrom(*reader, 1) == all);
}

TEST_CASE("an append that fails leaves no base for the next one", "[delta]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult result;
  REQUIRE(ledger->append({pod("a", 1)}, {}, &result).isOk());
  // The second record's projection does not decode: the append fails after
  // the first of its records was noted as the object's base.
  const Status failed =
      ledger->append({pod("a", 2), pod("b", 3, std::string(16, '\xff'))}, {}, &result);
  REQUIRE_FALSE(failed.isOk());
  REQUIRE(ledger->append({pod("a", 4)}, {}, &result).isOk());
  REQUIRE(ledger->lastSeq() == 2);
  Record r;
  REQUIRE(ledger->read(2, &r).isOk());
  CHECK(r.objectJson == pod("a", 4).objectJson);
  // The failed append forgot every base; the next record has one again.
  REQUIRE(ledger->append({pod("a", 5)}, {}, &result).isOk());
  CHECK(storedDeltas(*ledger) == std::map<std::uint64_t, std::uint64_t>{{3, 2}});
  requireDeltasSound(*ledger, false);
}

TEST_CASE("a cut stores whole the records whose base leaves", "[delta][cut]") {
  TempDir dir;
  auto live = openLedger(dir.path("live"));
  ingestText(*live, demoStream(), "test", 3);
  replay::writeCheckpoints(*live, 7);
  const std::uint64_t seq = live->lastSeq() / 2;
  const std::vector<std::string> after = jsonFrom(*live, seq + 1);
  std::size_t across = 0;
  for (const auto& [record, base] : storedDeltas(*live)) across += record > seq && base <= seq;
  REQUIRE(across > 0);  // the cut has records to rewrite

  tamper::cutAfter(*live, seq, dir.path("archive"));
  for (const auto& [record, base] : storedDeltas(*live)) {
    INFO("seq " << record << " is stored against " << base);
    CHECK(base > seq);
  }
  CHECK(jsonFrom(*live, seq + 1) == after);
  requireDeltasSound(*live);
  // Appends after the cut store nothing against a record before it, though
  // the appender's bases held some.
  ingestText(*live, demoStream(), "again", 3);
  for (const auto& [record, base] : storedDeltas(*live)) CHECK(base > seq);
  requireDeltasSound(*live);
}

TEST_CASE("a damaged base is named by the reader of the record stored against it",
          "[delta][verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  const auto deltas = storedDeltas(*ledger);
  REQUIRE_FALSE(deltas.empty());
  const auto [seq, base] = *deltas.rbegin();
  std::string stored;
  REQUIRE(ledger->getRaw(format::kLogFamily, format::seqKey(base), &stored).isOk());
  stored.resize(format::kHashSize);
  stored += "not the base";
  REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(base), stored).isOk());
  Record r;
  const Status st = ledger->read(seq, &r);
  CHECK(st.isCorruption());
  CHECK_THAT(st.message(), Catch::Contains("seq " + std::to_string(seq)));
  VerifyReport report;
  const bool sound = verifyLog(*ledger, &report, tamper::ingestDerivations()).isOk() && report.ok();
  CHECK_FALSE(sound);
}
