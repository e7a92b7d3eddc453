// What a cut keeps of the records it archived (ledger/internal/
// verify_carried.h): dedupe keys naming them, live entries of objects whose
// last record is archived, the object index's referrer keys. Alone, verify
// takes them as the link; with the archive (VerifyOptions::archive) each
// edit, deletion and invention is named by family and key.
#include <set>

#include "ledger/internal/ledger_internal.h"
#include "ledger/internal/verify_scan.h"
#include "ledger/object_index.h"
#include "ledger/verify.h"
#include "tests/tamper_support.h"

namespace verify_carried_test {

using namespace ledger;
using namespace ledger::testing;

VerifyReport verifiedWith(const Ledger& ledger, const Ledger* archive) {
  VerifyOptions options = tamper::ingestDerivations();
  options.archive = archive;
  VerifyReport report;
  const Status st = verifyLog(ledger, &report, options);
  INFO(st.toString());
  REQUIRE(st.isOk());
  return report;
}

// The keys of `family` the predicate picks, in key order.
std::vector<std::string> keysOf(
    const Ledger& ledger, const char* family,
    const std::function<bool(std::string_view, std::string_view)>& pick) {
  std::vector<std::string> keys;
  REQUIRE(ledger
              .scanRaw(family,
                       [&](std::string_view key, std::string_view value) {
                         if (pick(key, value)) keys.emplace_back(key);
                       })
              .isOk());
  return keys;
}

// The object keys and object index keys the live ledger's own records form.
struct Formed {
  std::set<std::string> objects;
  std::set<std::string> indexKeys;
};
Formed formedBy(const Ledger& ledger) {
  Formed out;
  std::vector<std::string> keys;
  REQUIRE(ledger
              .scanProjections(ledger.firstSeq(), ledger.lastSeq(),
                               [&](std::uint64_t seq, schema::ProjectedRecord::Reader r) {
                                 keys.clear();
                                 appendObjectIndexKeys(seq, r, keys);
                                 out.indexKeys.insert(keys.begin(), keys.end());
                                 return true;
                               })
              .isOk());
  REQUIRE(ledger
              .scanRecords(ledger.firstSeq(), 0,
                           [&](const Record& r, const Digest&) {
                             out.objects.insert(r.identity.objectKey());
                             return true;
                           })
              .isOk());
  return out;
}

bool isReferrer(std::string_view key) {
  std::string_view object;
  std::uint64_t first = 0;
  return !parseRecordEntryKey(key, &object, &first);
}

}  // namespace verify_carried_test

using namespace verify_carried_test;

TEST_CASE("verify --archive checks what the cut kept of the archived records", "[verify]") {
  TempDir dir;
  auto live = openLedger(dir.path("live"));
  ingestText(*live, demoStream());
  // Late: most objects are last recorded before it.
  const std::uint64_t cut = live->lastSeq() - 3;
  tamper::cutAfter(*live, cut, dir.path("archive"));
  Ledger::Options readOnly;
  readOnly.readOnly = true;
  readOnly.createIfMissing = false;
  auto archive = openLedger(dir.path("archive"), readOnly);
  REQUIRE(verifiedWith(*archive, nullptr).ok());
  {
    const VerifyReport sound = verifiedWith(*live, archive.get());
    INFO(sound.problem);
    REQUIRE(sound.ok());
  }
  const Formed formed = formedBy(*live);
  // Kept entries only the archived records account for.
  const auto keptEvents = keysOf(*live, format::kEventsFamily,
                                 [&](auto, auto value) { return format::decodeU64(value) <= cut; });
  const auto keptLive = keysOf(*archive, format::kLiveFamily, [&](auto key, auto) {
    return !formed.objects.contains(std::string(key));
  });
  const auto keptReferrers = keysOf(*archive, format::kObjectIndexFamily, [&](auto key, auto) {
    return isReferrer(key) && !formed.indexKeys.contains(std::string(key));
  });
  REQUIRE(keptEvents.size() > 2);
  REQUIRE(!keptLive.empty());
  REQUIRE(!keptReferrers.empty());

  // Each damage: taken as the link without the archive, named with it.
  auto namedWithArchive = [&](const char* family, const std::string& key, const char* problem) {
    CHECK(verifiedWith(*live, nullptr).ok());
    const VerifyReport v = verifiedWith(*live, archive.get());
    CHECK(v.firstBadSeq == 0);
    CHECK(v.badFamily == family);
    CHECK(v.badKey == verify_scan::Findings::printable(key));
    CHECK_THAT(v.problem, Catch::Contains(problem));
  };
  SECTION("a kept dedupe key naming another archived record") {
    std::string named;
    REQUIRE(live->getRaw(format::kEventsFamily, keptEvents[0], &named).isOk());
    const std::uint64_t other = format::decodeU64(named) == cut ? cut - 1 : cut;
    REQUIRE(
        live->putRawForTesting(format::kEventsFamily, keptEvents[0], format::seqKey(other)).isOk());
    namedWithArchive(format::kEventsFamily, keptEvents[0], "does not form it");
  }
  SECTION("a kept dedupe key deleted") {
    REQUIRE(live->deleteRawForTesting(format::kEventsFamily, keptEvents[1]).isOk());
    namedWithArchive(format::kEventsFamily, keptEvents[1], "missing from the live ledger");
  }
  SECTION("a kept live entry with another resourceVersion") {
    std::string value;
    REQUIRE(live->getRaw(format::kLiveFamily, keptLive[0], &value).isOk());
    LiveObject object;
    decodeLive(value, &object);
    PendingRecord edited;
    edited.identity.uid = object.uid;
    edited.identity.resourceVersion = object.resourceVersion + "0";
    REQUIRE(live->putRawForTesting(format::kLiveFamily, keptLive[0], encodeLive(edited)).isOk());
    namedWithArchive(format::kLiveFamily, keptLive[0], "differ from the archive's");
  }
  SECTION("a kept live entry deleted") {
    REQUIRE(live->deleteRawForTesting(format::kLiveFamily, keptLive[0]).isOk());
    namedWithArchive(format::kLiveFamily, keptLive[0], "is missing");
  }
  SECTION("a live entry for an object no record describes") {
    const std::string invented = keptLive[0] + "-invented";
    REQUIRE(
        live->putRawForTesting(format::kLiveFamily, invented, std::string("uid\0rv", 6)).isOk());
    namedWithArchive(format::kLiveFamily, invented, "no record, live or archived");
  }
  SECTION("a referrer key no record forms") {
    const std::string invented = keptReferrers[0] + "-invented";
    REQUIRE(live->putRawForTesting(format::kObjectIndexFamily, invented, "").isOk());
    namedWithArchive(format::kObjectIndexFamily, invented, "no record, live or archived");
  }
  SECTION("a kept referrer key deleted") {
    REQUIRE(live->deleteRawForTesting(format::kObjectIndexFamily, keptReferrers[0]).isOk());
    namedWithArchive(format::kObjectIndexFamily, keptReferrers[0], "referrer key of the archived");
  }
}
