// The object_index a commit writes (ledger/object_index.h): exactly the keys
// its records form, read back from the stored projections, on a simulated
// cluster whose pods name their workloads as owners and whose claims are
// reserved for pods; the rebuild writes the same family again.
#include "ledger/object_index.h"

#include <algorithm>

#include "ingest/projector.h"
#include "ledger/format.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

std::vector<std::string> storedIndex(const Ledger& ledger) {
  std::vector<std::string> keys;
  REQUIRE(ledger
              .scanRaw(format::kObjectIndexFamily,
                       [&](std::string_view k, std::string_view v) {
                         CHECK(v.empty());
                         keys.emplace_back(k);
                       })
              .isOk());
  return keys;
}

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

}  // namespace

TEST_CASE("a record key is the object key, a NUL and the seq big-endian", "[ledger][index]") {
  const std::string key = format::objectRecordKey("/Pod/team/p", 0x0102);
  CHECK(key == std::string("r/Pod/team/p\0\0\0\0\0\0\0\x01\x02", 21));
  std::string appended = "kept";
  format::appendObjectRecordKey(appended, "/Pod/team/p", 0x0102);
  CHECK(appended == "kept" + key);
  CHECK(format::objectRecordsPrefix("/Pod/team/p") == key.substr(0, 13));
  CHECK(format::encodeU64(0x0102030405060708ULL) == "\x01\x02\x03\x04\x05\x06\x07\x08");
}

TEST_CASE("the object index a commit writes is what its records form; a rebuild writes it again",
          "[ledger][index]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  REQUIRE(ingestText(*ledger, simulatedStream(3, 3000)).rejected == 0);
  const std::vector<std::string> stored = storedIndex(*ledger);
  const std::vector<std::string> formed = formedFromRecords(*ledger);
  REQUIRE(stored == formed);

  // Every record has its key; pods name their workloads, claims their pods.
  const auto records = std::count_if(stored.begin(), stored.end(),
                                     [](const std::string& k) { return k.starts_with('r'); });
  CHECK(static_cast<std::uint64_t>(records) == ledger->lastSeq());
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
  CHECK(storedIndex(*ledger) == formed);
}
