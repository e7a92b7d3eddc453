// The object_index a commit writes (ledger/object_index.h): one record entry
// per object per batch listing its records, and exactly the keys its records
// form, read back from the stored projections, on a simulated cluster whose
// pods name their workloads as owners and whose claims are reserved for
// pods; the rebuild writes the same keys again. The record entries' values
// decode, and what does not decode is refused.
#include "ledger/object_index.h"

#include <algorithm>

#include "ingest/projector.h"
#include "ledger/format.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

std::vector<std::string> formedFromRecords(const Ledger& ledger) {
  std::vector<std::string> keys;
  REQUIRE(ledger
              .scanProjections(1, ledger.lastSeq(),
                               [&](std::uint64_t seq, schema::ProjectedRecord::Reader r) {
                                 appendObjectIndexKeys(seq, r, keys);
                                 return true;
                               })
              .isOk());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::vector<std::uint64_t> decoded(std::uint64_t first, std::string_view value) {
  std::vector<std::uint64_t> seqs;
  REQUIRE(decodeRecordEntry(first, value, seqs));
  return seqs;
}

bool refused(std::uint64_t first, std::string_view value) {
  std::vector<std::uint64_t> seqs = {7};
  const bool ok = decodeRecordEntry(first, value, seqs);
  CHECK(seqs == std::vector<std::uint64_t>{7});  // left as it was
  return !ok;
}

}  // namespace

TEST_CASE("a record key is the object key, a NUL and the seq big-endian", "[ledger][index]") {
  const std::string key = format::objectRecordKey("/Pod/team/p", 0x0102);
  CHECK(key == std::string("r/Pod/team/p\0\0\0\0\0\0\0\x01\x02", 21));
  std::string appended = "kept";
  format::appendObjectRecordKey(appended, "/Pod/team/p", 0x0102);
  CHECK(appended == "kept" + key);
  CHECK(format::objectRecordsPrefix("/Pod/team/p") == key.substr(0, 13));
  CHECK(format::encodeU64(0x0102030405060708ULL) == "\x01\x02\x03\x04\x05\x06\x07\x08");

  std::string_view object;
  std::uint64_t first = 0;
  REQUIRE(parseRecordEntryKey(key, &object, &first));
  CHECK(object == "/Pod/team/p");
  CHECK(first == 0x0102);
  CHECK_FALSE(
      parseRecordEntryKey(format::referrerKey("team", "u", "/Pod/team/p"), &object, &first));
  CHECK_FALSE(parseRecordEntryKey(key.substr(0, key.size() - 1), &object, &first));
  CHECK_FALSE(parseRecordEntryKey(std::string("r\0\0\0\0\0\0\0\0", 9), &object, &first));
}

TEST_CASE("a record entry's value lists the later seqs as LEB128 differences", "[ledger][index]") {
  std::string value;
  appendLaterRecordSeqs(value, 10, std::vector<std::uint64_t>{11, 138, 16522});
  // 1; 127; 16384 = 0x80 0x80 0x01.
  CHECK(value == std::string("\x01\x7f\x80\x80\x01", 5));
  CHECK(decoded(10, value) == std::vector<std::uint64_t>{10, 11, 138, 16522});
  CHECK(decoded(42, "") == std::vector<std::uint64_t>{42});

  const std::vector<std::uint64_t> far = {1ULL << 40, UINT64_MAX};
  value.clear();
  appendLaterRecordSeqs(value, 1, far);
  CHECK(decoded(1, value) == std::vector<std::uint64_t>{1, 1ULL << 40, UINT64_MAX});

  CHECK(refused(1, std::string("\x80", 1)));      // cut short
  CHECK(refused(1, std::string("\x01\x00", 2)));  // a difference of 0
  CHECK(refused(1, std::string(10, '\xff')));     // more than 64 bits
  CHECK(refused(1, std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10)));
  value.clear();
  appendLaterRecordSeqs(value, 0, std::vector<std::uint64_t>{UINT64_MAX});
  CHECK(refused(2, value));  // past 2^64 - 1
}

TEST_CASE("the object index a commit writes is what its records form; a rebuild writes it again",
          "[ledger][index]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  REQUIRE(ingestText(*ledger, simulatedStream(3, 3000), "test", 500).rejected == 0);
  std::size_t entries = 0;
  const std::vector<std::string> stored = objectIndexAsRecordKeys(*ledger, &entries);
  const std::vector<std::string> formed = formedFromRecords(*ledger);
  REQUIRE(stored == formed);  // each record listed once, nothing else

  // Every record is listed, in fewer entries than records: an object's
  // changes in one batch share one.
  const auto records = std::count_if(stored.begin(), stored.end(),
                                     [](const std::string& k) { return k.starts_with('r'); });
  CHECK(static_cast<std::uint64_t>(records) == ledger->lastSeq());
  const auto referrers = static_cast<std::size_t>(stored.size() - records);
  CHECK(entries - referrers < ledger->lastSeq() / 2);
  std::size_t podReferrers = 0, claimReferrers = 0;
  for (const std::string& k : stored) {
    if (!k.starts_with('o')) continue;
    podReferrers += k.find("/Pod/") != std::string::npos;
    claimReferrers += k.find("/ResourceClaim/") != std::string::npos;
  }
  CHECK(podReferrers > 0);
  CHECK(claimReferrers > 0);

  std::uint64_t rewritten = 0;
  REQUIRE(ledger
              ->rebuildProjection(
                  [](const Record& r) { return ingest::projectJsonText(r.objectJson); }, &rewritten)
              .isOk());
  CHECK(rewritten == ledger->lastSeq());
  CHECK(objectIndexAsRecordKeys(*ledger) == formed);
}

TEST_CASE("an object's changes in one commit share a record entry, in seq order",
          "[ledger][index]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  using namespace k8s;
  std::string events = event("ADDED", resourceFlavor("default"));
  auto cqAt = [](int gi) {
    const std::string n = std::to_string(gi);
    return clusterQueue("cq", "v1beta2", "", {{"default", {{"memory", n + "Gi"}}}}, n);
  };
  for (int gi = 1; gi <= 4; ++gi) events += event(gi == 1 ? "ADDED" : "MODIFIED", cqAt(gi));
  events += event("ADDED", resourceFlavor("spot"));
  // One batch of 6, then one of 1 (the ClusterQueue's last change alone).
  events += event("MODIFIED", cqAt(5));
  REQUIRE(ingestText(*ledger, events, "test", 6).rejected == 0);
  REQUIRE(ledger->lastSeq() == 7);
  std::map<std::string, std::vector<std::uint64_t>> entries;
  REQUIRE(ledger
              ->scanObjectIndex("r",
                                [&](std::string_view k, std::string_view v) {
                                  std::string_view object;
                                  std::uint64_t first = 0;
                                  REQUIRE(parseRecordEntryKey(k, &object, &first));
                                  std::vector<std::uint64_t> seqs;
                                  REQUIRE(decodeRecordEntry(first, v, seqs));
                                  entries[std::string(object) + "@" + std::to_string(first)] = seqs;
                                })
              .isOk());
  const std::string cq = "kueue.x-k8s.io/ClusterQueue//cq";
  CHECK(entries.size() == 4);
  CHECK(entries[cq + "@2"] == std::vector<std::uint64_t>{2, 3, 4, 5});
  CHECK(entries[cq + "@7"] == std::vector<std::uint64_t>{7});
  CHECK(entries["kueue.x-k8s.io/ResourceFlavor//spot@6"] == std::vector<std::uint64_t>{6});
}
