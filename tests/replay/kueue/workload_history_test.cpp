// ledger-query workload through object_index against the full scan, on a
// simulated cluster whose workloads' pods hold DRA claims: every workload
// found through the index, and the same history for an even spread of them,
// with or without a time bound; the same through an index of one entry per
// record, as formats 3 and 4 wrote it; a ledger whose index does not cover
// every record is scanned until rebuild-projection indexes it.
#include "replay/kueue/workload_history.h"

#include <set>
#include <utility>
#include <vector>

#include "ingest/projector.h"
#include "ledger/format.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

std::set<std::pair<std::string, std::string>> workloadsOf(const Ledger& ledger) {
  std::set<std::pair<std::string, std::string>> out;
  REQUIRE(ledger
              .scanProjections(1, ledger.lastSeq(),
                               [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
                                 if (r.getObject().getBody().isWorkload()) {
                                   out.emplace(r.getIdentity().getNamespace().cStr(),
                                               r.getIdentity().getName().cStr());
                                 }
                                 return true;
                               })
              .isOk());
  return out;
}

void requireSame(const replay::WorkloadHistory& a, const replay::WorkloadHistory& b) {
  REQUIRE(a.found == b.found);
  REQUIRE(a.entries.size() == b.entries.size());
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    const auto& x = a.entries[i];
    const auto& y = b.entries[i];
    INFO("entry " << i << ": " << x.event << " / " << y.event);
    CHECK(x.seq == y.seq);
    CHECK(x.timeNs == y.timeNs);
    CHECK(x.event == y.event);
    CHECK(x.state == y.state);
    CHECK(x.clusterQueue == y.clusterQueue);
    CHECK(x.recorded == y.recorded);
    CHECK(x.usage == y.usage);
    CHECK(x.detail == y.detail);
  }
}

constexpr std::size_t kCompared = static_cast<std::size_t>(repetitions(16));

}  // namespace

TEST_CASE("a workload's history through the object index is the full scan's",
          "[generator][history]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  // Commits of 500, so an object's changes in one share an index entry.
  REQUIRE(ingestText(*ledger, simulatedStream(5, 6000), "test", 500).rejected == 0);
  // Queried after a reopen, as ledger-query reads a ledger: the writing
  // process keeps the index's memtable unsorted and sorts a copy of it for
  // each read (ledger/ledger.cpp), which the opening flushes.
  ledger.reset();
  ledger = openLedger(dir.path("ledger"));
  const auto workloads = workloadsOf(*ledger);
  REQUIRE(workloads.size() > 20);
  std::int64_t middle = 0;
  REQUIRE(ledger->timeOf(ledger->lastSeq() / 2, &middle).isOk());

  // Every workload is found through the index, the claims through the pods
  // that own them.
  std::size_t devices = 0;
  for (const auto& [ns, name] : workloads) {
    INFO(ns << "/" << name);
    const auto indexed = replay::workloadHistory(*ledger, ns, name, {}, {});
    CHECK(indexed.indexed);
    CHECK(indexed.found);
    for (const auto& e : indexed.entries) devices += e.event == "DeviceAllocated";
  }
  CHECK(devices > 0);
  // Each full scan reads the whole ledger, so the paths are compared on an
  // even spread of the workloads (the first and the last among them).
  std::vector<std::pair<std::string, std::string>> sample;
  const std::size_t stride = (workloads.size() + kCompared - 1) / kCompared;
  std::size_t i = 0;
  for (const auto& w : workloads)
    if (i++ % stride == 0 || i == workloads.size()) sample.push_back(w);
  REQUIRE(sample.size() >= kCompared / 2);

  std::vector<replay::WorkloadHistory> histories;
  for (const auto& [ns, name] : sample) {
    INFO(ns << "/" << name);
    const auto indexed = replay::workloadHistory(*ledger, ns, name, {}, {});
    REQUIRE(indexed.indexed);
    const auto scanned = replay::workloadHistoryScan(*ledger, ns, name, {}, {});
    CHECK_FALSE(scanned.indexed);
    requireSame(indexed, scanned);
    histories.push_back(indexed);
    requireSame(replay::workloadHistory(*ledger, ns, name, {}, middle),
                replay::workloadHistoryScan(*ledger, ns, name, {}, middle));
  }

  // Every entry of the index, to delete or rewrite.
  auto storedEntries = [&] {
    std::vector<std::string> keys;
    REQUIRE(ledger
                ->scanRaw(format::kObjectIndexFamily,
                          [&](std::string_view k, std::string_view) { keys.emplace_back(k); })
                .isOk());
    return keys;
  };

  // An index as formats 3 and 4 wrote it, an entry per record, reads the
  // same.
  const std::vector<std::string> perRecord = objectIndexAsRecordKeys(*ledger);
  for (const auto& k : storedEntries())
    REQUIRE(ledger->deleteRawForTesting(format::kObjectIndexFamily, k).isOk());
  for (const auto& k : perRecord)
    REQUIRE(ledger->putRawForTesting(format::kObjectIndexFamily, k, "").isOk());
  for (std::size_t w = 0; w < sample.size(); ++w) {
    INFO(sample[w].first << "/" << sample[w].second);
    const auto indexed =
        replay::workloadHistory(*ledger, sample[w].first, sample[w].second, {}, {});
    REQUIRE(indexed.indexed);
    requireSame(indexed, histories[w]);
  }

  SECTION("an index that does not cover every record is not read") {
    REQUIRE(ledger->deleteRawForTesting(format::kMetaFamily, format::kObjectIndexKey).isOk());
    // Even an emptied one: the scan answers.
    for (const auto& k : storedEntries())
      REQUIRE(ledger->deleteRawForTesting(format::kObjectIndexFamily, k).isOk());
    const auto& [ns, name] = *workloads.begin();
    const auto history = replay::workloadHistory(*ledger, ns, name, {}, {});
    CHECK_FALSE(history.indexed);
    requireSame(history, replay::workloadHistoryScan(*ledger, ns, name, {}, {}));

    std::uint64_t rewritten = 0;
    REQUIRE(
        ledger
            ->rebuildProjection(
                [](const Record& r) { return ingest::projectJsonText(r.objectJson); }, &rewritten)
            .isOk());
    const auto rebuilt = replay::workloadHistory(*ledger, ns, name, {}, {});
    CHECK(rebuilt.indexed);
    requireSame(rebuilt, history);
    CHECK(objectIndexAsRecordKeys(*ledger) == perRecord);
  }
}
