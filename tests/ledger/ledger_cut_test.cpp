// Ledger::cutArchived (ledger/ledger.h): one batch removes the records up to
// the cut and their index entries, keeps the later records' object index
// entries listed, replaces the checkpoints by the cut's, and records the cut;
// readers asked for a record or a moment before it are refused naming the
// archive; the cut survives a reopen; a second cut is refused.
#include "ledger/archive.h"
#include "ledger/format.h"
#include "ledger/object_index.h"
#include "replay/fold/checkpoints.h"
#include "tests/tamper_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace ledger_cut_test {

std::vector<Record> recordsFrom(const Ledger& ledger, std::uint64_t from) {
  std::vector<Record> out;
  REQUIRE(ledger
              .scanRecords(from, 0,
                           [&](const Record& r, const Digest&) {
                             out.push_back(r);
                             return true;
                           })
              .isOk());
  return out;
}

std::vector<std::string> keysAfter(const std::vector<std::string>& keys, std::uint64_t seq) {
  std::vector<std::string> out;
  for (const std::string& k : keys) {
    std::string_view object;
    std::uint64_t first = 0;
    if (!parseRecordEntryKey(k, &object, &first) || first > seq) out.push_back(k);
  }
  return out;
}

}  // namespace ledger_cut_test

using namespace ledger_cut_test;

TEST_CASE("cutArchived leaves the records after the cut and refuses those before",
          "[archive][cut]") {
  TempDir dir;
  auto live = openLedger(dir.path("live"));
  auto twin = openLedger(dir.path("twin"));
  ingestText(*live, demoStream(), "test", 3);  // batches that span the cut
  ingestText(*twin, demoStream(), "test", 3);
  replay::writeCheckpoints(*live, 7);
  const std::uint64_t seq = live->lastSeq() / 2;
  const std::uint64_t last = live->lastSeq();
  const ArchiveCut cut = tamper::cutAfter(*live, seq, dir.path("archive"));

  auto checkCut = [&](const Ledger& l) {
    REQUIRE(l.archiveCut().has_value());
    CHECK(l.archiveCut()->seq == seq);
    CHECK(l.archiveCut()->archiveDir == dir.path("archive"));
    CHECK(l.firstSeq() == seq + 1);
    CHECK(l.lastSeq() == last);
    CHECK(l.formatVersion() == format::kCurrentFormat);
    // Every later record, its index entries and every state from the cut on.
    CHECK(recordsFrom(l, seq + 1) == recordsFrom(*twin, seq + 1));
    CHECK(objectIndexAsRecordKeys(l) == keysAfter(objectIndexAsRecordKeys(*twin), seq));
    for (std::uint64_t s = seq; s <= last; ++s)
      CHECK(reportOf(l, s).digest == reportOf(*twin, s).digest);
    CHECK(replay::verifyCheckpoints(l).firstBadSeq == 0);
    // Before the cut: refused, naming the archive.
    Record r;
    const Status before = l.read(seq, &r);
    CHECK(before.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(before.message(), Catch::Contains("archive " + dir.path("archive")));
    CHECK_THROWS_WITH(reportOf(l, seq - 1), Catch::Contains("--archive " + dir.path("archive")));
    std::uint64_t at = 0;
    CHECK(l.seqAtOrBefore(cut.timeNs, &at).isOk());
    CHECK(at >= seq);
    CHECK(l.seqAtOrBefore(cut.timeNs - 1, &at).code() == Status::Code::kInvalidArgument);
  };
  checkCut(*live);
  SECTION("the cut survives a reopen, and a second cut is refused") {
    live.reset();
    auto reopened = openLedger(dir.path("live"));
    checkCut(*reopened);
    const Status again = reopened->cutArchived(cut, "", {});
    CHECK(again.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(again.message(), Catch::Contains("cut already"));
  }
  SECTION("checkpoints after the cut fold from the cut's") {
    CHECK(replay::writeCheckpoints(*live, 7) > 0);
    CHECK(replay::verifyCheckpoints(*live).firstBadSeq == 0);
    CHECK(reportOf(*live).digest == reportOf(*twin).digest);
  }
}

TEST_CASE("cutArchived refuses a cut that is not of this ledger", "[archive][cut]") {
  TempDir dir;
  auto live = openLedger(dir.path("live"));
  tamper::smallLedger(*live);
  ArchiveCut cut{2, Digest{}, 0, 0, dir.path("archive")};
  CHECK(live->cutArchived(cut, "", {}).code() == Status::Code::kInvalidArgument);  // hash
  cut.seq = live->lastSeq();
  CHECK(live->cutArchived(cut, "", {}).code() == Status::Code::kInvalidArgument);  // no record left
  CHECK_FALSE(live->archiveCut().has_value());
}
