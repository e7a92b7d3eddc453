// Large commits write their log records as a table file (ledger/internal/log_table.h):
// the same ledger as through the write-ahead log, and the head as the commit
// point when a commit stops between the table and the batch.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>

#include "ledger/format.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

std::unique_ptr<Ledger> openWith(const std::string& dir, std::uint64_t tableCommitBytes) {
  Ledger::Options o;
  o.sync = false;
  o.tableCommitBytes = tableCommitBytes;
  return openLedger(dir, o);
}

std::unique_ptr<Ledger> openReadOnly(const std::string& dir) {
  Ledger::Options o;
  o.readOnly = true;
  return openLedger(dir, o);
}

// `count` ConfigMaps from `first`, with a body of some size so batches span
// several table blocks.
std::vector<PendingRecord> configMaps(int first, int count) {
  std::vector<PendingRecord> out;
  for (int i = first; i < first + count; ++i) {
    const std::string name = "cm-" + std::to_string(i);
    PendingRecord p;
    p.type = EventType::kAdded;
    p.timeNs = 1000 + i;
    p.identity = ObjectIdentity{"", "v1", "ConfigMap", "ns", name, "uid-" + name, "1"};
    p.objectJson = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                   R"(","namespace":"ns"},"data":{"blob":")" + std::string(3000, 'x') + "\"}}";
    p.dedupeKey = "k/" + name;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::pair<Record, Digest>> allRecords(const Ledger& ledger) {
  std::vector<std::pair<Record, Digest>> out;
  REQUIRE(ledger
              .scanRecords(1, 0,
                           [&](const Record& r, const Digest& d) {
                             out.emplace_back(r, d);
                             return true;
                           })
              .isOk());
  return out;
}

void requireSound(const Ledger& ledger) {
  VerifyReport report;
  REQUIRE(verifyLog(ledger, &report).isOk());
  INFO(report.problem);
  CHECK(report.ok());
  CHECK(report.lastSeq == ledger.lastSeq());
}

}  // namespace

TEST_CASE("a large commit's log records go in as a table file, the same ledger as through the log",
          "[ledger][log_table]") {
  TempDir dir;
  auto viaTable = openWith(dir.path("table"), /*tableCommitBytes=*/1);
  auto viaLog = openWith(dir.path("log"), kNever);
  for (int batch = 0; batch < 3; ++batch) {
    for (Ledger* ledger : {viaTable.get(), viaLog.get()}) {
      AppendResult r;
      REQUIRE(ledger->append(configMaps(batch * 40, 40), {{"file:x", Cursor{"", 7u + batch}}}, &r)
                  .isOk());
      CHECK(r.lastSeq == 40u * (batch + 1));
    }
  }
  // Before any flush, only the table path has the log in table files.
  CHECK(viaTable->diskUsage()["log"] > 0);
  CHECK(viaLog->diskUsage()["log"] == 0);
  CHECK(viaTable->lastHash() == viaLog->lastHash());
  CHECK(allRecords(*viaTable).size() == 120);
  CHECK(allRecords(*viaTable) == allRecords(*viaLog));
  bool found = false;
  REQUIRE(viaTable->hasEvent("k/cm-77", &found).isOk());
  CHECK(found);
  requireSound(*viaTable);
  // Nothing is left staged once a table is in.
  CHECK(!std::filesystem::exists(dir.path("table/staging/log-81.sst")));

  // Reopened, the ledger goes on through the log: the two paths mix.
  viaTable.reset();
  auto reopened = openWith(dir.path("table"), kNever);
  CHECK(reopened->lastSeq() == 120);
  AppendResult r;
  REQUIRE(reopened->append(configMaps(120, 5), {}, &r).isOk());
  CHECK(r.firstSeq == 121);
  REQUIRE(viaLog->append(configMaps(120, 5), {}, &r).isOk());
  CHECK(reopened->lastHash() == viaLog->lastHash());
  requireSound(*reopened);
}

TEST_CASE("log records past the head are not committed: readers skip them, a writer drops them",
          "[ledger][log_table]") {
  // What a commit that stopped between its table file and the batch that
  // moves the head leaves behind (ledger/internal/log_table.h).
  TempDir dir;
  const std::string path = dir.path("l");
  {
    auto ledger = openWith(path, 1);
    AppendResult r;
    REQUIRE(ledger->append(configMaps(0, 5), {}, &r).isOk());
    std::string sixth;
    REQUIRE(ledger->getRaw(format::kLogFamily, format::seqKey(5), &sixth).isOk());
    REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(6), sixth).isOk());
    REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(7), sixth).isOk());
  }
  {
    auto reader = openReadOnly(path);
    CHECK(reader->lastSeq() == 5);
    Record rec;
    CHECK(reader->read(5, &rec).isOk());
    CHECK(reader->read(6, &rec).isNotFound());
    CHECK(allRecords(*reader).size() == 5);
    requireSound(*reader);
  }
  // A staging file of a commit that never reached its ingest.
  std::filesystem::create_directories(path + "/staging");
  std::ofstream(path + "/staging/log-6.sst") << "half a table";

  auto writer = openWith(path, 1);
  std::string value;
  CHECK(writer->getRaw(format::kLogFamily, format::seqKey(6), &value).isNotFound());
  CHECK(writer->getRaw(format::kLogFamily, format::seqKey(7), &value).isNotFound());
  CHECK(!std::filesystem::exists(path + "/staging"));
  AppendResult r;
  REQUIRE(writer->append(configMaps(100, 1), {}, &r).isOk());
  CHECK(r.firstSeq == 6);
  Record rec;
  REQUIRE(writer->read(6, &rec).isOk());
  CHECK(rec.identity.name == "cm-100");
  CHECK(allRecords(*writer).size() == 6);
  requireSound(*writer);
}
