// A reader beside a live writer: the writer's flushes and compactions delete
// table files and logs the reader's open named or had not opened yet. The
// reader's open tries again when a file vanished under it, and a reader
// beside a live writer holds every table file from its open on.
#include "ledger/internal/live_writer.h"

#include <atomic>
#include <thread>

#include "ledger/format.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace live_writer_test {

PendingRecord namespaceRecord(int i) {
  const std::string name = "ns-" + std::to_string(i);
  PendingRecord p;
  p.type = EventType::kAdded;
  p.timeNs = 1700000000000000000LL + i * 1000000000LL;
  p.identity = ObjectIdentity{"", "v1", "Namespace", "", name, "uid-" + name, "1"};
  p.objectJson = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + "\"}}";
  p.dedupeKey = "k/" + name;
  return p;
}

// `batches` appends of 5 records, each written as a table file of its own.
void appendTables(Ledger& writer, int first, int batches) {
  for (int b = 0; b < batches; ++b) {
    std::vector<PendingRecord> batch;
    for (int i = 0; i < 5; ++i) batch.push_back(namespaceRecord(first + b * 5 + i));
    AppendResult r;
    REQUIRE(writer.append(batch, {}, &r).isOk());
  }
}

Ledger::Options tableEveryAppend() {
  Ledger::Options o;
  o.sync = false;
  o.tableCommitBytes = 1;
  return o;
}

std::unique_ptr<Ledger> openReader(const std::string& dir) {
  Ledger::Options o;
  o.readOnly = true;
  o.createIfMissing = false;
  return openLedger(dir, o);
}

}  // namespace live_writer_test

using namespace live_writer_test;

TEST_CASE("a reader opened beside a writer reads on after the writer compacted its files away",
          "[ledger][live]") {
  TempDir dir;
  const std::string path = dir.path("l");
  auto writer = openLedger(path, tableEveryAppend());
  // More table files than RocksDB opens when a ledger opens (16 a family):
  // the log family's later ones would be opened by the reads.
  appendTables(*writer, 0, 40);
  REQUIRE(countTableFiles(path) >= 40);
  CHECK(writerHoldsLedger(path));

  auto reader = openReader(path);
  REQUIRE(writer->compact().isOk());
  REQUIRE(countTableFiles(path) < 20);

  VerifyReport v;
  const Status st = verifyLog(*reader, &v);
  INFO(st.toString());
  REQUIRE(st.isOk());
  CHECK(v.ok());
  CHECK(ledgerRecords(*reader).size() == 200);
}

TEST_CASE("a ledger no writer holds is not held by one", "[ledger][live]") {
  TempDir dir;
  const std::string path = dir.path("l");
  { appendTables(*openLedger(path, tableEveryAppend()), 0, 2); }
  CHECK_FALSE(writerHoldsLedger(path));
  CHECK_FALSE(writerHoldsLedger(dir.path("nothing")));
  auto writer = openLedger(path, tableEveryAppend());
  CHECK(writerHoldsLedger(path));
  // A reader's check of the lock file closes what it opened; that must not
  // release this process's own lock (POSIX drops every lock a process holds
  // on a file when it closes any descriptor of it).
  auto reader = openReader(path);
  std::unique_ptr<Ledger> second;
  CHECK(Ledger::open(path, tableEveryAppend(), &second).code() == Status::Code::kBusy);
  writer.reset();
  CHECK_FALSE(writerHoldsLedger(path));
}

TEST_CASE("readers open whole while a writer flushes and compacts under them", "[ledger][live]") {
  TempDir dir;
  const std::string path = dir.path("l");
  auto writer = openLedger(path, tableEveryAppend());
  appendTables(*writer, 0, 20);
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    for (int round = 0; !stop.load(); ++round) {
      appendTables(*writer, 100 + round * 20, 4);
      REQUIRE(writer->compact().isOk());
      // A writer's edits pause now and then (a sidecar's commit every
      // second at most); one that never did would keep every reader out.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  int opened = 0;
  std::string failure;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until && failure.empty()) {
    Ledger::Options o;
    o.readOnly = true;
    o.createIfMissing = false;
    std::unique_ptr<Ledger> reader;
    const Status st = Ledger::open(path, o, &reader);
    if (!st.isOk()) {
      failure = st.toString();
      break;
    }
    VerifyReport v;
    const Status vs = verifyLog(*reader, &v);
    if (!vs.isOk() || !v.ok()) {
      failure = "verify: " + vs.toString() + " at seq " + std::to_string(v.firstBadSeq) + " " +
                v.badFamily + " " + v.badKey + ": " + v.problem;
    }
    ++opened;
  }
  stop = true;
  churn.join();
  INFO(failure);
  CHECK(failure.empty());
  CHECK(opened > 0);
}

TEST_CASE("readers that open every table file share one budget for the process", "[ledger][live]") {
  auto first = TableFileReservation::tryReserve(10, 15);
  CHECK(static_cast<bool>(first));
  CHECK_FALSE(static_cast<bool>(TableFileReservation::tryReserve(10, 15)));
  CHECK(static_cast<bool>(TableFileReservation::tryReserve(5, 15)));        // given back at once
  CHECK_FALSE(static_cast<bool>(TableFileReservation::tryReserve(0, 15)));  // nothing to hold
  TableFileReservation moved = std::move(first);
  CHECK_FALSE(static_cast<bool>(first));  // NOLINT(bugprone-use-after-move): moved-from is empty
  moved = TableFileReservation();
  CHECK(static_cast<bool>(TableFileReservation::tryReserve(15, 15)));
}
