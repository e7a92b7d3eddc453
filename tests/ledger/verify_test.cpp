// verifyLog on derived families edited with RocksDB's checksums intact
// (tests/tamper_support.h): each edit is found and named, by the record's
// seq or by the family and key; a sound ledger passes.
#include "ledger/verify.h"
#include "tests/tamper_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

VerifyReport verified(const Ledger& ledger, const VerifyOptions& options) {
  VerifyReport report;
  const Status st = verifyLog(ledger, &report, options);
  INFO(st.toString());
  REQUIRE(st.isOk());
  return report;
}

}  // namespace

TEST_CASE("verifyLog derives every family again and names the first edit", "[verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const std::uint64_t cq = tamper::smallLedger(*ledger);
  const VerifyOptions options = tamper::ingestDerivations();
  {
    const VerifyReport sound = verified(*ledger, options);
    INFO(sound.problem);
    REQUIRE(sound.ok());
    REQUIRE(sound.recordsChecked == ledger->lastSeq());
  }

  SECTION("projection: 9Gi where the log says 8Gi") {
    tamper::projection(*ledger, cq);
    // Without the projector only what the ledger can know is checked: the
    // edit names the right record, type and time.
    CHECK(verified(*ledger, {}).ok());
    const VerifyReport v = verified(*ledger, options);
    CHECK(v.firstBadSeq == cq);
    CHECK_THAT(v.problem, Catch::Contains("projects to"));
  }
  SECTION("events: a dedupe key naming another object's record") {
    tamper::events(*ledger, cq, cq + 1);
    const VerifyReport v = verified(*ledger, options);
    CHECK(v.firstBadSeq == 0);
    CHECK(v.badFamily == "events");
    CHECK_THAT(v.badKey, Catch::Contains("uid--cq"));
    CHECK_THAT(v.problem, Catch::Contains("names seq " + std::to_string(cq + 1)));
  }
  SECTION("events: a dedupe key naming a seq beyond the head") {
    Record record;
    REQUIRE(ledger->read(cq, &record).isOk());
    REQUIRE(ledger
                ->putRawForTesting(format::kEventsFamily, ingest::dedupeKeyOf(record),
                                   format::seqKey(ledger->lastSeq() + 1))
                .isOk());
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.badFamily == "events");
    CHECK_THAT(v.problem, Catch::Contains("beyond the head"));
  }
  SECTION("live: another resourceVersion") {
    tamper::live(*ledger, cq);
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.firstBadSeq == cq);
    CHECK_THAT(v.problem, Catch::Contains("live entry"));
  }
  SECTION("live: an object no record leaves live") {
    REQUIRE(ledger
                ->putRawForTesting(format::kLiveFamily, "kueue.x-k8s.io/ClusterQueue//ghost",
                                   std::string("uid\0"
                                               "1",
                                               5))
                .isOk());
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.badFamily == "live");
    CHECK(v.badKey == "kueue.x-k8s.io/ClusterQueue//ghost");
  }
  SECTION("time_index: a second entry at an earlier time") {
    tamper::timeIndex(*ledger, cq);
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.firstBadSeq == cq);
    CHECK_THAT(v.problem, Catch::Contains("time index"));
  }
  SECTION("time_index: an entry holding a value") {
    Record record;
    REQUIRE(ledger->read(cq, &record).isOk());
    REQUIRE(
        ledger->putRawForTesting(format::kTimeIndexFamily, format::timeKey(record.timeNs, cq), "x")
            .isOk());
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.firstBadSeq == cq);
  }
  SECTION("object_index: an entry deleted, added, or holding a value") {
    const std::string cqKey = "kueue.x-k8s.io/ClusterQueue//cq";
    SECTION("deleted") {
      REQUIRE(
          ledger
              ->deleteRawForTesting(format::kObjectIndexFamily, format::objectRecordKey(cqKey, cq))
              .isOk());
      const VerifyReport v = verified(*ledger, {});
      CHECK(v.firstBadSeq == cq);
      CHECK_THAT(v.problem, Catch::Contains("object index entry"));
    }
    SECTION("added: the ClusterQueue named at another record's seq") {
      REQUIRE(ledger
                  ->putRawForTesting(format::kObjectIndexFamily,
                                     format::objectRecordKey(cqKey, cq + 1), "")
                  .isOk());
      const VerifyReport v = verified(*ledger, {});
      CHECK(v.badFamily == "object_index");
      CHECK_THAT(v.badKey, Catch::Contains("ClusterQueue//cq"));
    }
    SECTION("added: an owner the object never had") {
      REQUIRE(ledger
                  ->putRawForTesting(format::kObjectIndexFamily,
                                     format::referrerKey("team", "uid-x", cqKey), "")
                  .isOk());
      const VerifyReport v = verified(*ledger, {});
      CHECK(v.badFamily == "object_index");
      CHECK_THAT(v.badKey, Catch::Contains("uid-x"));
    }
    SECTION("edited: a record entry listing a later seq ('x': 120 on)") {
      REQUIRE(ledger
                  ->putRawForTesting(format::kObjectIndexFamily, format::objectRecordKey(cqKey, cq),
                                     "x")
                  .isOk());
      const VerifyReport v = verified(*ledger, {});
      CHECK(v.badFamily == "object_index");
      CHECK_THAT(v.badKey, Catch::Contains("ClusterQueue//cq"));
      CHECK_THAT(v.problem, Catch::Contains("no record forms"));
    }
    SECTION("edited: a referrer entry holding a value") {
      REQUIRE(ledger
                  ->putRawForTesting(format::kObjectIndexFamily,
                                     format::referrerKey("team", "uid-x", cqKey), "x")
                  .isOk());
      const VerifyReport v = verified(*ledger, {});
      CHECK(v.badFamily == "object_index");
      CHECK_THAT(v.problem, Catch::Contains("holds a value"));
    }
  }
}

// An entry listing an object's several records of one commit
// (ledger/object_index.h): each listed record stands for its per-record key,
// so a seq too many, too few, twice or of another object is named, and so is
// a value that does not decode.
TEST_CASE("verifyLog reads a record entry as the records it lists", "[verify][index]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  using namespace k8s;
  std::string events = event("ADDED", resourceFlavor("default"));
  for (int gi = 1; gi <= 4; ++gi) {
    const std::string n = std::to_string(gi);
    events += event(gi == 1 ? "ADDED" : "MODIFIED",
                    clusterQueue("cq", "v1beta2", "", {{"default", {{"memory", n + "Gi"}}}}, n));
  }
  REQUIRE(ingestText(*ledger, events, "test", 100).rejected == 0);
  REQUIRE(verified(*ledger, {}).ok());
  // seqs 2..5, the first in the key.
  const std::string entry = format::objectRecordKey("kueue.x-k8s.io/ClusterQueue//cq", 2);
  std::string value;
  REQUIRE(ledger->getRaw(format::kObjectIndexFamily, entry, &value).isOk());
  REQUIRE(value == std::string("\x01\x01\x01", 3));
  auto put = [&](const std::string& key, const std::string& v) {
    REQUIRE(ledger->putRawForTesting(format::kObjectIndexFamily, key, v).isOk());
  };
  SECTION("a record left out") {
    put(entry, std::string("\x01\x01", 2));
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.firstBadSeq == 5);
    CHECK_THAT(v.problem, Catch::Contains("object index entry") && Catch::Contains("missing"));
  }
  SECTION("a seq past the object's records") {
    put(entry, std::string("\x01\x01\x01\x01", 4));
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.badFamily == "object_index");
    CHECK_THAT(v.problem, Catch::Contains("no record forms"));
  }
  SECTION("another object's record") {
    put(entry, std::string("\x01\x01\x01", 3));
    put(format::objectRecordKey("kueue.x-k8s.io/ResourceFlavor//default", 1),
        std::string("\x01", 1));
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.badFamily == "object_index");
    CHECK_THAT(v.badKey, Catch::Contains("ResourceFlavor//default"));
  }
  SECTION("a record listed twice") {
    put(format::objectRecordKey("kueue.x-k8s.io/ClusterQueue//cq", 4), "");
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.badFamily == "object_index");
    CHECK_THAT(v.problem, Catch::Contains("lists record seq 4 a second time"));
  }
  SECTION("a value that does not decode") {
    put(entry, std::string("\x01\x80", 2));
    const VerifyReport v = verified(*ledger, {});
    CHECK(v.badFamily == "object_index");
    CHECK_THAT(v.problem, Catch::Contains("do not decode"));
  }
  SECTION("as an earlier build wrote it: an entry per record") {
    REQUIRE(ledger->deleteRawForTesting(format::kObjectIndexFamily, entry).isOk());
    for (std::uint64_t seq = 2; seq <= 5; ++seq)
      put(format::objectRecordKey("kueue.x-k8s.io/ClusterQueue//cq", seq), "");
    CHECK(verified(*ledger, {}).ok());
  }
}

// Upgrading users saw both as edits. The keys are derived from the log as
// today's are, and pass; the projections differ from this build's and are
// named as an older projector's, with the rebuild, after which all passes.
TEST_CASE("an earlier build's ledger: its keys pass, its projections ask for the rebuild",
          "[verify]") {
  TempDir dir;
  tamper::earlierBuild(*openLedger(dir.path("l")));
  auto ledger = openLedger(dir.path("l"));
  CHECK(ledger->projectionFormat() == format::kProjectionFormatBeforeItWasRecorded);
  const VerifyReport before = verified(*ledger, tamper::ingestDerivations());
  CHECK(before.firstBadSeq == 1);
  CHECK_THAT(before.problem, Catch::Contains("written by an older projector") &&
                                 Catch::Contains("run `ledger-replay rebuild-projection`"));
  std::uint64_t rebuilt = 0;
  REQUIRE(ledger
              ->rebuildProjection(
                  [](const Record& r) { return ingest::projectJsonText(r.objectJson); }, &rebuilt)
              .isOk());
  CHECK(ledger->projectionFormat() == format::kProjectionFormat);
  const VerifyReport after = verified(*ledger, tamper::ingestDerivations());
  INFO(after.problem);
  CHECK(after.ok());
}

// `ledger-replay verify` draws its progress bar from this callback
// (tools/progress.h): one call per record scanned, counting up to the head.
TEST_CASE("verifyLog reports its progress once per record, up to the head", "[verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  tamper::smallLedger(*ledger);
  VerifyOptions options = tamper::ingestDerivations();
  std::vector<std::uint64_t> done;
  options.progress = [&](std::uint64_t d, std::uint64_t total) {
    CHECK(total == ledger->lastSeq());
    done.push_back(d);
  };
  REQUIRE(verified(*ledger, options).ok());
  REQUIRE(done.size() == ledger->lastSeq());
  for (std::size_t i = 0; i < done.size(); ++i) CHECK(done[i] == i + 1);
}
