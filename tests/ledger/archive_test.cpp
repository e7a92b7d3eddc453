// writeArchive (ledger/archive.h): the first records of a ledger copied into
// a sealed ledger of their own that verifies alone, chains to the same hash
// and answers as the source did at its last record; extendArchive seals it
// again further on; what is refused, and a damaged archive named.
#include "ledger/archive.h"

#include <filesystem>
#include <fstream>

#include "replay/fold/checkpoints.h"
#include "tests/tamper_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace archive_test {

Digest storedHash(const Ledger& ledger, std::uint64_t seq) {
  Digest out{};
  REQUIRE(ledger
              .scanRecords(seq, seq,
                           [&](const Record&, const Digest& stored) {
                             out = stored;
                             return false;
                           })
              .isOk());
  return out;
}

VerifyReport verified(const Ledger& ledger) {
  VerifyReport report;
  const Status st = verifyLog(ledger, &report, tamper::ingestDerivations());
  INFO(st.toString());
  REQUIRE(st.isOk());
  return report;
}

ArchiveOptions options() {
  ArchiveOptions o;
  o.derive = tamper::ingestDerivations();
  o.batchRecords = 5;  // several appends, one split mid-way
  return o;
}

}  // namespace archive_test

using namespace archive_test;

TEST_CASE("writeArchive copies the first records into a sealed ledger that verifies alone",
          "[archive]") {
  TempDir dir;
  auto source = openLedger(dir.path("live"));
  ingestText(*source, demoStream());
  REQUIRE(source->lastSeq() > 20);
  const std::uint64_t cut = source->lastSeq() / 2 + 1;
  const std::string to = dir.path("archive");

  ArchiveOptions o = options();
  std::uint64_t checkpoints = 0;
  o.beforeSeal = [&](Ledger& archive) {
    checkpoints = replay::writeCheckpoints(archive, 7);
    return Status::ok();
  };
  ArchiveSeal seal;
  Status st = writeArchive(*source, cut, to, o, &seal);
  INFO(st.toString());
  REQUIRE(st.isOk());
  CHECK(checkpoints > 0);
  CHECK(seal.lastSeq == cut);
  CHECK(seal.lastHash == storedHash(*source, cut));

  std::optional<ArchiveSeal> read;
  REQUIRE(readArchiveSeal(to, &read).isOk());
  REQUIRE(read.has_value());
  CHECK(*read == seal);

  Ledger::Options readOnly;
  readOnly.readOnly = true;
  readOnly.createIfMissing = false;
  {
    auto archive = openLedger(to, readOnly);
    CHECK(checkArchiveSeal(*archive, seal).isOk());
    const VerifyReport v = verified(*archive);
    INFO(v.problem);
    CHECK(v.ok());
    CHECK(v.recordsChecked == cut);
    CHECK(replay::verifyCheckpoints(*archive).firstBadSeq == 0);
    // The archive answers as the source did at the cut.
    CHECK(reportOf(*archive).digest == reportOf(*source, cut).digest);
    CHECK(ledgerRecords(*archive).back() == ledgerRecords(*source)[cut - 1]);
  }

  SECTION("a second archive into the sealed directory is refused") {
    const Status again = writeArchive(*source, source->lastSeq(), to, options(), &seal);
    CHECK(again.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(again.message(), Catch::Contains(to) && Catch::Contains("sealed archive"));
  }
  SECTION("extendArchive adds the next records and seals it again; a stale copy goes") {
    std::filesystem::create_directory(to + ".extending");  // a crash's leftover
    const std::uint64_t later = source->lastSeq() - 1;
    ArchiveOptions more = o;
    Status extended = extendArchive(*source, later, to, more, &seal);
    INFO(extended.toString());
    REQUIRE(extended.isOk());
    CHECK(seal.lastSeq == later);
    CHECK(seal.lastHash == storedHash(*source, later));
    CHECK_FALSE(std::filesystem::exists(to + ".extending"));
    REQUIRE(readArchiveSeal(to, &read).isOk());
    CHECK(read == std::optional<ArchiveSeal>(seal));
    auto archive = openLedger(to, readOnly);
    CHECK(checkArchiveSeal(*archive, seal).isOk());
    const VerifyReport v = verified(*archive);
    INFO(v.problem);
    CHECK(v.ok());
    CHECK(v.recordsChecked == later);
    CHECK(replay::verifyCheckpoints(*archive).firstBadSeq == 0);
    CHECK(reportOf(*archive).digest == reportOf(*source, later).digest);
    // Not after the seal: refused, the archive as it was.
    const Status none = extendArchive(*source, later, to, more, &seal);
    CHECK(none.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(none.message(), Catch::Contains(to) && Catch::Contains("does not extend"));
  }
  SECTION("a damaged record is named by verify") {
    {
      auto archive = openLedger(to);
      cutLastWordOfProjection(*archive, 3);
    }
    auto archive = openLedger(to, readOnly);
    CHECK(verified(*archive).firstBadSeq == 3);
  }
  SECTION("a damaged seal is named") {
    std::ofstream(to + "/" + kArchiveSealFile, std::ios::binary | std::ios::trunc) << "LEDGARCH";
    std::optional<ArchiveSeal> damaged;
    const Status bad = readArchiveSeal(to, &damaged);
    CHECK(bad.isCorruption());
    CHECK_THAT(bad.message(), Catch::Contains(to + "/" + kArchiveSealFile));
  }
  SECTION("records appended after the seal are told from it") {
    {
      auto archive = openLedger(to);
      ingestText(*archive, event("ADDED", k8s::resourceFlavor("late")));
    }
    auto archive = openLedger(to, readOnly);
    const Status moved = checkArchiveSeal(*archive, seal);
    CHECK(moved.isCorruption());
    CHECK_THAT(moved.message(), Catch::Contains("seal says seq " + std::to_string(cut)));
  }
}

TEST_CASE("writeArchive refuses what is not a cut of the ledger or not an empty directory",
          "[archive]") {
  TempDir dir;
  auto source = openLedger(dir.path("live"));
  tamper::smallLedger(*source);
  ArchiveSeal seal;
  CHECK(writeArchive(*source, 0, dir.path("a"), options(), &seal).code() ==
        Status::Code::kInvalidArgument);
  CHECK(writeArchive(*source, source->lastSeq() + 1, dir.path("a"), options(), &seal).code() ==
        Status::Code::kInvalidArgument);
  CHECK_FALSE(std::filesystem::exists(dir.path("a")));

  SECTION("an archive that stopped before its seal is named, not overwritten") {
    ArchiveOptions o = options();
    o.beforeSeal = [](Ledger&) { return Status::ioError("stopped before the seal"); };
    CHECK(writeArchive(*source, 2, dir.path("a"), o, &seal).code() == Status::Code::kIoError);
    std::optional<ArchiveSeal> none;
    REQUIRE(readArchiveSeal(dir.path("a"), &none).isOk());
    CHECK_FALSE(none.has_value());
    const Status again = writeArchive(*source, 2, dir.path("a"), options(), &seal);
    CHECK(again.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(again.message(), Catch::Contains("did not finish"));
  }
}
