// The storage layer: append/read/reopen, atomic batches with cursors, the
// time index, the format version check and verification of the chain; a
// damaged directory or write-ahead log refused, never recreated or truncated.
#include <rocksdb/db.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "ledger/format.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

PendingRecord pending(const std::string& name, std::int64_t timeNs,
                      EventType type = EventType::kAdded) {
  PendingRecord p;
  p.type = type;
  p.timeNs = timeNs;
  p.identity = ObjectIdentity{"", "v1", "Namespace", "", name, "uid-" + name, "1"};
  p.objectJson = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + "\"}}";
  p.dedupeKey = "k/" + name + "/" + eventTypeName(type);
  return p;
}

}  // namespace

TEST_CASE("append assigns dense seqs, reads back and survives reopen", "[ledger]") {
  TempDir dir;
  {
    auto ledger = openLedger(dir.path("l"));
    REQUIRE(ledger->lastSeq() == 0);
    AppendResult r;
    REQUIRE(
        ledger->append({pending("a", 100), pending("b", 200)}, {{"file:x", Cursor{"7", 42}}}, &r)
            .isOk());
    CHECK(r.firstSeq == 1);
    CHECK(r.lastSeq == 2);
    REQUIRE(ledger->append({pending("c", 300)}, {}, &r).isOk());
    CHECK(r.firstSeq == 3);
    Record rec;
    REQUIRE(ledger->read(2, &rec).isOk());
    CHECK(rec.seq == 2);
    CHECK(rec.identity.name == "b");
    CHECK(rec.timeNs == 200);
  }
  auto ledger = openLedger(dir.path("l"));
  CHECK(ledger->lastSeq() == 3);
  CHECK(ledger->lastTimeNs() == 300);
  Cursor c;
  REQUIRE(ledger->cursor("file:x", &c).isOk());
  CHECK(c == Cursor{"7", 42});
  std::vector<std::uint64_t> seqs;
  REQUIRE(ledger
              ->scanRecords(1, 0,
                            [&](const Record& r, const Digest&) {
                              seqs.push_back(r.seq);
                              return true;
                            })
              .isOk());
  CHECK(seqs == std::vector<std::uint64_t>{1, 2, 3});
  VerifyReport v;
  REQUIRE(verifyLog(*ledger, &v).isOk());
  CHECK(v.ok());
  CHECK(v.recordsChecked == 3);
}

TEST_CASE("times never go backwards: an earlier time is raised and counted", "[ledger]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult r;
  REQUIRE(ledger->append({pending("a", 500), pending("b", 100), pending("c", 600)}, {}, &r).isOk());
  CHECK(r.timesRaised == 1);
  Record rec;
  REQUIRE(ledger->read(2, &rec).isOk());
  CHECK(rec.timeNs == 500);
}

TEST_CASE("the time index finds the last record at or before a time in one seek", "[ledger]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult r;
  REQUIRE(ledger
              ->append({pending("a", 100), pending("b", 200), pending("c", 200), pending("d", 400)},
                       {}, &r)
              .isOk());
  std::uint64_t seq = 99;
  REQUIRE(ledger->seqAtOrBefore(50, &seq).isOk());
  CHECK(seq == 0);
  REQUIRE(ledger->seqAtOrBefore(100, &seq).isOk());
  CHECK(seq == 1);
  REQUIRE(ledger->seqAtOrBefore(250, &seq).isOk());
  CHECK(seq == 3);
  REQUIRE(ledger->seqAtOrBefore(1000, &seq).isOk());
  CHECK(seq == 4);
  // Negative times (before 1970) sort correctly too.
  REQUIRE(ledger->seqAtOrBefore(-5, &seq).isOk());
  CHECK(seq == 0);
}

TEST_CASE("dedupe keys and live objects are committed with the batch", "[ledger]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult r;
  REQUIRE(ledger->append({pending("a", 1)}, {}, &r).isOk());
  bool found = false;
  REQUIRE(ledger->hasEvent("k/a/ADDED", &found).isOk());
  CHECK(found);
  REQUIRE(ledger->hasEvent("k/zz/ADDED", &found).isOk());
  CHECK_FALSE(found);
  LiveObject live;
  REQUIRE(ledger->liveObject("/Namespace//a", &live).isOk());
  CHECK(live.uid == "uid-a");
  REQUIRE(ledger->append({pending("a", 2, EventType::kDeleted)}, {}, &r).isOk());
  CHECK(ledger->liveObject("/Namespace//a", &live).isNotFound());
}

// A ledger holding no dedupe key of an earlier build answers a lookup of one
// without RocksDB (ledger.h, legacyEventKeys_): that must never hide one that
// is there, whether an append in this process wrote it or an earlier process.
TEST_CASE("dedupe keys of earlier builds are found however they got there", "[ledger]") {
  TempDir dir;
  // "e\0" uid "\0" resourceVersion "\0" type (format.h).
  std::string legacy(format::kLegacyEventKeyPrefix);
  legacy += "uid-a";
  legacy += '\0';
  legacy += "1";
  legacy += '\0';
  legacy += "ADDED";
  std::uint64_t seq = 0;
  bool found = true;
  {
    auto ledger = openLedger(dir.path("l"));
    AppendResult r;
    REQUIRE(ledger->append({pending("a", 1)}, {}, &r).isOk());
    CHECK(ledger->eventSeq(legacy, &seq).isNotFound());
    REQUIRE(ledger->hasEvent(legacy, &found).isOk());
    CHECK_FALSE(found);
    PendingRecord old = pending("b", 2);
    old.dedupeKey = legacy;
    REQUIRE(ledger->append({old}, {}, &r).isOk());
    REQUIRE(ledger->eventSeq(legacy, &seq).isOk());
    CHECK(seq == 2);
    REQUIRE(ledger->hasEvent(legacy, &found).isOk());
    CHECK(found);
  }
  {
    auto ledger = openLedger(dir.path("l"));  // found by the open's seek
    REQUIRE(ledger->eventSeq(legacy, &seq).isOk());
    CHECK(seq == 2);
  }
  {
    auto ledger = openLedger(dir.path("other"));
    AppendResult r;
    REQUIRE(ledger->append({pending("a", 1)}, {}, &r).isOk());
    CHECK(ledger->eventSeq(legacy, &seq).isNotFound());
    REQUIRE(ledger->putRawForTesting(format::kEventsFamily, legacy, format::seqKey(1)).isOk());
    REQUIRE(ledger->eventSeq(legacy, &seq).isOk());
    CHECK(seq == 1);
  }
}

TEST_CASE("the live view keeps a record's content hash, and a value without one reads as none",
          "[ledger]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult r;
  PendingRecord manifest = pending("m", 1);
  manifest.identity.uid.clear();
  manifest.identity.resourceVersion.clear();
  Digest hash{};
  hash[0] = 0;  // a NUL inside the digest must not cut it short
  hash[1] = 0xAB;
  hash[31] = 0x01;
  manifest.contentHash = hash;
  REQUIRE(ledger->append({manifest, pending("n", 2)}, {}, &r).isOk());
  LiveObject live;
  REQUIRE(ledger->liveObject("/Namespace//m", &live).isOk());
  CHECK(live.uid.empty());
  CHECK(live.resourceVersion.empty());
  CHECK(live.contentHash == std::optional<Digest>(hash));
  REQUIRE(ledger->liveObject("/Namespace//n", &live).isOk());
  CHECK(live.uid == "uid-n");
  CHECK(live.resourceVersion == "1");
  CHECK_FALSE(live.contentHash.has_value());
  std::map<std::string, LiveObject> scanned;
  REQUIRE(ledger
              ->scanLive("/Namespace/", [&](std::string_view key,
                                            const LiveObject& o) { scanned[std::string(key)] = o; })
              .isOk());
  CHECK(scanned.at("/Namespace//m").contentHash == std::optional<Digest>(hash));
  CHECK_FALSE(scanned.at("/Namespace//n").contentHash.has_value());
  // A value as earlier builds wrote it (uid, NUL, resourceVersion).
  REQUIRE(ledger->putRawForTesting(format::kLiveFamily, "/Namespace//old", std::string("u\0007", 3))
              .isOk());
  REQUIRE(ledger->liveObject("/Namespace//old", &live).isOk());
  CHECK(live.uid == "u");
  CHECK(live.resourceVersion == "7");
  CHECK_FALSE(live.contentHash.has_value());
}

TEST_CASE("the live view after a batch is each object's last change in it", "[ledger]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult r;
  REQUIRE(ledger->append({pending("gone", 1)}, {}, &r).isOk());
  auto changed = [](const std::string& name, std::int64_t t, EventType type, const char* rv) {
    PendingRecord p = pending(name, t, type);
    p.identity.resourceVersion = rv;
    p.dedupeKey += rv;
    return p;
  };
  // One batch: "a" added and modified twice, "b" added then deleted, "gone"
  // (live before the batch) deleted and added again, "c" deleted only.
  REQUIRE(ledger
              ->append(
                  {changed("a", 2, EventType::kAdded, "1"), changed("b", 3, EventType::kAdded, "1"),
                   changed("a", 4, EventType::kModified, "2"),
                   changed("gone", 5, EventType::kDeleted, "2"),
                   changed("b", 6, EventType::kDeleted, "2"),
                   changed("gone", 7, EventType::kAdded, "3"),
                   changed("a", 8, EventType::kModified, "3"),
                   changed("c", 9, EventType::kDeleted, "1")},
                  {}, &r)
              .isOk());
  CHECK(r.firstSeq == 2);
  CHECK(r.lastSeq == 9);
  LiveObject live;
  REQUIRE(ledger->liveObject("/Namespace//a", &live).isOk());
  CHECK(live.resourceVersion == "3");
  CHECK(ledger->liveObject("/Namespace//b", &live).isNotFound());
  REQUIRE(ledger->liveObject("/Namespace//gone", &live).isOk());
  CHECK(live.resourceVersion == "3");
  CHECK(ledger->liveObject("/Namespace//c", &live).isNotFound());
  // Every record is still in the log, in order.
  Record rec;
  REQUIRE(ledger->read(4, &rec).isOk());
  CHECK(rec.identity.name == "a");
  CHECK(rec.identity.resourceVersion == "2");
}

TEST_CASE("a ledger of an unknown format is refused with a clear message", "[ledger]") {
  TempDir dir;
  {
    auto ledger = openLedger(dir.path("l"));
    REQUIRE(ledger->putRawForTesting(format::kMetaFamily, format::kFormatKey, "99").isOk());
  }
  std::unique_ptr<Ledger> ledger;
  Status st = Ledger::open(dir.path("l"), Ledger::Options{}, &ledger);
  CHECK(st.code() == Status::Code::kIncompatible);
  CHECK_THAT(st.message(), Catch::Contains("format version 99") && Catch::Contains("newer"));
}

TEST_CASE("a format-1 ledger is read as it is, and upgraded when opened for writing", "[ledger]") {
  TempDir dir;
  {
    auto ledger = openLedger(dir.path("l"));
    AppendResult r;
    REQUIRE(ledger->append({pending("a", 1), pending("b", 2)}, {}, &r).isOk());
  }
  // What version 1 wrote: no checkpoint_objects, no object_index, format "1".
  makeEarlierFormat(
      dir.path("l"), "1",
      {format::kCheckpointObjectsFamily, format::kObjectIndexFamily, format::kUsageRollupsFamily},
      {std::string(format::kObjectIndexKey)});
  {
    Ledger::Options ro;
    ro.readOnly = true;
    std::unique_ptr<Ledger> ledger;
    Status st = Ledger::open(dir.path("l"), ro, &ledger);
    INFO(st.toString());
    REQUIRE(st.isOk());
    CHECK(ledger->formatVersion() == 1);
    CHECK(ledger->lastSeq() == 2);
    std::size_t entries = 0;
    CHECK(ledger->scanRaw(format::kCheckpointObjectsFamily, [&](auto, auto) { ++entries; }).isOk());
    CHECK(entries == 0);
    Status chunk = ledger->readCheckpointChunks({CheckpointChunkId{2, 0}}, [](auto, auto) {});
    CHECK(chunk.isNotFound());
    bool indexed = true;
    REQUIRE(ledger->objectIndexComplete(&indexed).isOk());
    CHECK_FALSE(indexed);
  }
  {
    auto ledger = openLedger(dir.path("l"));
    CHECK(ledger->formatVersion() == format::kCurrentFormat);
    // The index covers no record written before the upgrade.
    bool indexed = true;
    REQUIRE(ledger->objectIndexComplete(&indexed).isOk());
    CHECK_FALSE(indexed);
    REQUIRE(ledger->putCheckpoint(2, "checkpoint", {"chunk0-8"}).isOk());
  }
  Ledger::Options ro;
  ro.readOnly = true;
  std::unique_ptr<Ledger> ledger;
  REQUIRE(Ledger::open(dir.path("l"), ro, &ledger).isOk());
  CHECK(ledger->formatVersion() == format::kCurrentFormat);
  std::string seen;
  REQUIRE(ledger
              ->readCheckpointChunks({CheckpointChunkId{2, 0}},
                                     [&](std::size_t i, kj::ArrayPtr<const capnp::word> w) {
                                       CHECK(i == 0);
                                       auto b = w.asBytes();
                                       seen.assign(reinterpret_cast<const char*>(b.begin()),
                                                   b.size());
                                     })
              .isOk());
  CHECK(seen == "chunk0-8");
}

TEST_CASE("opening a missing ledger read-only is NotFound", "[ledger]") {
  TempDir dir;
  std::unique_ptr<Ledger> ledger;
  Ledger::Options o;
  o.readOnly = true;
  o.createIfMissing = false;
  CHECK(Ledger::open(dir.path("nothing"), o, &ledger).isNotFound());
}

TEST_CASE("verify names the seq of one flipped byte in a stored record", "[ledger][verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult r;
  std::vector<PendingRecord> batch;
  for (int i = 0; i < 20; ++i) batch.push_back(pending("ns" + std::to_string(i), 10 + i));
  REQUIRE(ledger->append(batch, {}, &r).isOk());
  for (std::uint64_t victim : {1ULL, 7ULL, 20ULL}) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{40}, std::size_t{100}}) {
      std::string value;
      REQUIRE(ledger->getRaw(format::kLogFamily, format::seqKey(victim), &value).isOk());
      const std::string original = value;
      value[offset % value.size()] ^= 0x01;
      REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(victim), value).isOk());
      VerifyReport v;
      REQUIRE(verifyLog(*ledger, &v).isOk());
      CHECK(v.firstBadSeq == victim);
      REQUIRE(
          ledger->putRawForTesting(format::kLogFamily, format::seqKey(victim), original).isOk());
    }
  }
  VerifyReport v;
  REQUIRE(verifyLog(*ledger, &v).isOk());
  CHECK(v.ok());
}

TEST_CASE("verifyChain checks the records after a verified point, in slices", "[ledger][verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult r;
  std::vector<PendingRecord> batch;
  for (int i = 0; i < 20; ++i) batch.push_back(pending("ns" + std::to_string(i), 10 + i));
  REQUIRE(ledger->append(batch, {}, &r).isOk());
  // In slices of 7, each from where the last ended: the whole log's head hash.
  ChainPoint at;
  VerifyReport v;
  for (std::uint64_t to : {7ULL, 14ULL, 0ULL}) {
    REQUIRE(verifyChain(*ledger, at, to, &v, &at).isOk());
    CHECK(v.ok());
  }
  CHECK(at.seq == 20);
  CHECK(at.hash == ledger->lastHash());
  CHECK(v.recordsChecked == 6);
  // Nothing new: nothing read.
  REQUIRE(verifyChain(*ledger, at, 0, &v, &at).isOk());
  CHECK((v.ok() && v.recordsChecked == 0 && v.lastSeq == 20));

  // A flipped byte before the point is found through the first record
  // after it that is stored against it (each of these records is stored as
  // a delta on the one before, format.h kDeltaMarker); the point stays at
  // the last sound record. From the start, the damaged record is named.
  ChainPoint middle;
  REQUIRE(verifyChain(*ledger, ChainPoint{}, 10, &v, &middle).isOk());
  std::string value;
  REQUIRE(ledger->getRaw(format::kLogFamily, format::seqKey(4), &value).isOk());
  value[40] ^= 0x01;
  REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(4), value).isOk());
  REQUIRE(ledger->getRaw(format::kLogFamily, format::seqKey(15), &value).isOk());
  value[40] ^= 0x01;
  REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(15), value).isOk());
  ChainPoint next;
  REQUIRE(verifyChain(*ledger, middle, 0, &v, &next).isOk());
  CHECK(v.firstBadSeq == 11);
  CHECK(next.seq == 10);
  CHECK(v.recordsChecked == 0);
  REQUIRE(verifyChain(*ledger, ChainPoint{}, 0, &v, &next).isOk());
  CHECK(v.firstBadSeq == 4);
  CHECK(next.seq == 3);
}

TEST_CASE("verify finds a missing record as a gap", "[ledger][verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  AppendResult r;
  REQUIRE(ledger->append({pending("a", 1), pending("b", 2), pending("c", 3)}, {}, &r).isOk());
  std::string third;
  REQUIRE(ledger->getRaw(format::kLogFamily, format::seqKey(3), &third).isOk());
  // Move record 3 to key 4: seq 3 is now missing.
  REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(4), third).isOk());
  REQUIRE(ledger->putRawForTesting(format::kLogFamily, format::seqKey(3), "").isOk());
  VerifyReport v;
  REQUIRE(verifyLog(*ledger, &v).isOk());
  CHECK(v.firstBadSeq == 3);
}

TEST_CASE("many projections are read in one pass, in ascending seq order", "[ledger]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::string stream;
  for (int i = 0; i < 700; ++i) {
    stream +=
        R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns-)" +
        std::to_string(i) + R"(","uid":"u-)" + std::to_string(i) + R"(","resourceVersion":"1"}}})" +
        "\n";
  }
  ingestText(*ledger, stream);
  REQUIRE(ledger->lastSeq() == 700);
  std::vector<std::uint64_t> wanted{1, 2, 150, 151, 299, 300};
  std::vector<std::string> names;
  REQUIRE(ledger
              ->readProjectionsWords(wanted,
                                     [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
                                       capnp::FlatArrayMessageReader reader(w);
                                       auto r = reader.getRoot<schema::ProjectedRecord>();
                                       CHECK(r.getIdentity().getName() ==
                                             "ns-" + std::to_string(seq - 1));
                                       names.emplace_back(r.getIdentity().getName().cStr());
                                     })
              .isOk());
  CHECK(names.size() == wanted.size());
  SECTION("more seqs than one lookup batch, every one in order") {
    std::vector<std::uint64_t> every;
    for (std::uint64_t seq = 3; seq <= 700; seq += 1) every.push_back(seq);
    std::vector<std::uint64_t> seen;
    REQUIRE(ledger
                ->readProjectionsWords(every,
                                       [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
                                         capnp::FlatArrayMessageReader reader(w);
                                         auto r = reader.getRoot<schema::ProjectedRecord>();
                                         CHECK(r.getIdentity().getName() ==
                                               "ns-" + std::to_string(seq - 1));
                                         seen.push_back(seq);
                                       })
                .isOk());
    CHECK(seen == every);
  }
  SECTION("a seq past the end is NotFound") {
    Status st = ledger->readProjectionsWords({5, 701}, [](std::uint64_t, auto) {});
    CHECK(st.code() == Status::Code::kNotFound);
    CHECK_THAT(st.message(), Catch::Contains("701"));
  }
  SECTION("a missing seq in a later batch is NotFound, named") {
    std::vector<std::uint64_t> many;
    for (std::uint64_t seq = 1; seq <= 600; ++seq) many.push_back(seq);
    many.push_back(900);
    Status st = ledger->readProjectionsWords(many, [](std::uint64_t, auto) {});
    CHECK(st.code() == Status::Code::kNotFound);
    CHECK_THAT(st.message(), Catch::Contains("900"));
  }
  SECTION("seqs out of order are refused") {
    Status st = ledger->readProjectionsWords({5, 4}, [](std::uint64_t, auto) {});
    CHECK_FALSE(st.isOk());
  }
}

TEST_CASE("compacting rewrites the tables and changes nothing a reader sees", "[ledger]") {
  TempDir dir;
  const std::string path = dir.path("l");
  std::vector<std::string> before;
  Digest head{};
  {
    auto ledger = openLedger(path);
    ingestText(*ledger, demoStream());
    head = ledger->lastHash();
    REQUIRE(ledger
                ->scanRaw(format::kProjectionFamily,
                          [&](std::string_view k, std::string_view v) {
                            before.push_back(std::string(k) + '=' + std::string(v));
                          })
                .isOk());
    REQUIRE_FALSE(before.empty());
    CHECK(ledger->compact(format::kProjectionFamily).isOk());
    CHECK(ledger->compact().isOk());
    CHECK(ledger->compact("no-such-family").code() == Status::Code::kInvalidArgument);
  }
  auto ledger = openLedger(path);
  CHECK(ledger->lastHash() == head);
  std::vector<std::string> after;
  REQUIRE(ledger
              ->scanRaw(format::kProjectionFamily,
                        [&](std::string_view k, std::string_view v) {
                          after.push_back(std::string(k) + '=' + std::string(v));
                        })
              .isOk());
  CHECK(after == before);
  VerifyReport v;
  REQUIRE(verifyLog(*ledger, &v).isOk());
  CHECK(v.ok());
  Ledger::Options ro;
  ro.readOnly = true;
  ledger.reset();
  std::unique_ptr<Ledger> reader;
  REQUIRE(Ledger::open(path, ro, &reader).isOk());
  CHECK(reader->compact().code() == Status::Code::kInvalidArgument);
}

TEST_CASE("the write-ahead log stays near its bound while small families lag", "[ledger]") {
  // 48 commits of 50 records of ~8 KB: 19 MB, a third of the log family's
  // write buffer, so no family fills a memtable. Without a bound (RocksDB's
  // default is gigabytes) nothing is flushed and all of it stays as log;
  // with one, RocksDB flushes the families holding the oldest log.
  auto writeAndMeasure = [](const std::string& dir, std::uint64_t maxWalBytes) {
    std::unique_ptr<Ledger> ledger;
    Ledger::Options o;
    o.sync = false;
    o.maxWalBytes = maxWalBytes;
    REQUIRE(Ledger::open(dir, o, &ledger).isOk());
    // Paddings that do not repeat one another: the log stores a record as a
    // delta against the one before, which would make equal ones small.
    std::mt19937 random(11);
    std::uniform_int_distribution<int> letter('a', 'z');
    std::string padding(8000, ' ');
    for (int batch = 0; batch < 48; ++batch) {
      std::vector<PendingRecord> records;
      for (int i = 0; i < 50; ++i) {
        for (char& c : padding) c = static_cast<char>(letter(random));
        PendingRecord p = pending("ns-" + std::to_string(batch * 50 + i), batch);
        p.objectJson.insert(p.objectJson.size() - 2, R"(,"padding":")" + padding + "\"");
        records.push_back(std::move(p));
      }
      AppendResult r;
      REQUIRE(ledger->append(records, {}, &r).isOk());
    }
    // RocksDB checks the bound when a write comes, and the flushes it starts
    // run in the background, the log they free deleted after: small writes
    // until the log is back near its bound (at once without one).
    std::uint64_t wal = 0;
    for (int tries = 0; tries < 200; ++tries) {
      const auto usage = ledger->diskUsage();
      REQUIRE(usage.count("wal") == 1);
      wal = usage.at("wal");
      CHECK(usage.at("total") >= wal);
      if (wal <= 4 * maxWalBytes) break;
      AppendResult r;
      REQUIRE(ledger->append({pending("tick-" + std::to_string(tries), 48)}, {}, &r).isOk());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    Record rec;
    REQUIRE(ledger->read(2400, &rec).isOk());
    CHECK(rec.identity.name == "ns-2399");
    return wal;
  };
  TempDir dir;
  const std::uint64_t bounded = writeAndMeasure(dir.path("bounded"), 1 << 20);
  CHECK(bounded <= 4u << 20);
  const std::uint64_t unbounded = writeAndMeasure(dir.path("unbounded"), 64ULL << 30);
  CHECK(unbounded >= 16u << 20);
  // Reopened, every record is there.
  auto ledger = openLedger(dir.path("bounded"));
  CHECK(ledger->lastSeq() >= 2400);
}

TEST_CASE("closing a writable ledger flushes its memtables, so later opens replay no log",
          "[ledger]") {
  // Read-only opens (ledger-query, ledger-replay) replay whatever the
  // write-ahead log holds into memory on every run; after a bulk ingest that
  // was up to the log's bound of data, each time.
  auto logBytes = [](const std::string& dir) {
    std::uint64_t bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".log") bytes += entry.file_size();
    }
    return bytes;
  };
  TempDir dir;
  const std::string path = dir.path("l");
  {
    auto ledger = openLedger(path);
    std::vector<PendingRecord> records;
    for (int i = 0; i < 20; ++i) records.push_back(pending("ns-" + std::to_string(i), i));
    AppendResult r;
    REQUIRE(ledger->append(records, {}, &r).isOk());
    CHECK(logBytes(path) > 0);
  }
  CHECK(logBytes(path) == 0);
  Ledger::Options ro;
  ro.readOnly = true;
  std::unique_ptr<Ledger> reader;
  REQUIRE(Ledger::open(path, ro, &reader).isOk());
  CHECK(reader->lastSeq() == 20);
  Record rec;
  REQUIRE(reader->read(20, &rec).isOk());
  CHECK(rec.identity.name == "ns-19");
}

namespace {

// The names of the files in `dir` whose names end with `suffix`, sorted.
std::vector<std::string> filesEndingWith(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(suffix)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A ledger of `records` records in batches of 25, committed with sync on and
// never closed: the image a crash leaves, every commit only in the
// write-ahead log. Copied from the open ledger's directory to `image`.
void crashImage(const std::string& live, const std::string& image, int records) {
  Ledger::Options o;
  o.sync = true;
  auto ledger = openLedger(live, o);
  for (int start = 0; start < records; start += 25) {
    std::vector<PendingRecord> batch;
    for (int i = start; i < start + 25 && i < records; ++i) {
      batch.push_back(pending("ns-" + std::to_string(i), i));
    }
    AppendResult r;
    REQUIRE(ledger->append(batch, {}, &r).isOk());
  }
  REQUIRE(filesEndingWith(live, ".sst").empty());  // nothing flushed yet
  std::filesystem::copy(live, image, std::filesystem::copy_options::recursive);
}

std::string onlyWal(const std::string& dir) {
  const auto logs = filesEndingWith(dir, ".log");
  REQUIRE(logs.size() == 1);
  return (std::filesystem::path(dir) / logs.front()).string();
}

}  // namespace

TEST_CASE("a ledger whose CURRENT is lost is refused, never created anew over its files",
          "[ledger][damage]") {
  TempDir dir;
  const std::string path = dir.path("l");
  {
    auto ledger = openLedger(path);
    AppendResult r;
    REQUIRE(ledger->append({pending("a", 1), pending("b", 2), pending("c", 3)}, {}, &r).isOk());
  }
  const auto tables = filesEndingWith(path, ".sst");
  REQUIRE_FALSE(tables.empty());
  REQUIRE(std::filesystem::remove(std::filesystem::path(path) / "CURRENT"));
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Ledger> ledger;
    Status st = Ledger::open(path, Ledger::Options{}, &ledger);
    INFO("attempt " << attempt << ": " << st.toString());
    CHECK(st.isCorruption());
    CHECK_THAT(st.message(), Catch::Contains("no CURRENT") && Catch::Contains("ldb repair") &&
                                 Catch::Contains("ledger-replay verify"));
    CHECK_FALSE(std::filesystem::exists(std::filesystem::path(path) / "CURRENT"));
    CHECK(filesEndingWith(path, ".sst") == tables);
  }
  Ledger::Options ro;
  ro.readOnly = true;
  std::unique_ptr<Ledger> reader;
  CHECK(Ledger::open(path, ro, &reader).isCorruption());

  // RocksDB's repair, as the message advises, gives the ledger back whole.
  rocksdb::DBOptions dbo;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const char* name :
       {"default", "log", "projection", "time_index", "events", "live", "checkpoints",
        "checkpoint_objects", "object_index", "usage_rollups", "meta"}) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  REQUIRE(rocksdb::RepairDB(path, dbo, families).ok());
  auto repaired = openLedger(path);
  CHECK(repaired->lastSeq() == 3);
  VerifyReport v;
  REQUIRE(verifyLog(*repaired, &v).isOk());
  CHECK(v.ok());
}

TEST_CASE("a ledger whose manifest is missing is refused as damaged", "[ledger][damage]") {
  TempDir dir;
  const std::string path = dir.path("l");
  {
    auto ledger = openLedger(path);
    AppendResult r;
    REQUIRE(ledger->append({pending("a", 1)}, {}, &r).isOk());
  }
  for (const auto& manifest : filesEndingWith(path, "")) {
    if (manifest.starts_with("MANIFEST-"))
      std::filesystem::remove(std::filesystem::path(path) / manifest);
  }
  for (bool readOnly : {false, true}) {
    Ledger::Options o;
    o.readOnly = readOnly;
    std::unique_ptr<Ledger> ledger;
    Status st = Ledger::open(path, o, &ledger);
    INFO(st.toString());
    CHECK(st.isCorruption());
    CHECK_THAT(st.message(), Catch::Contains("manifest") && Catch::Contains("ldb repair"));
  }
}

TEST_CASE("a new ledger is created only in an absent or empty directory", "[ledger]") {
  TempDir dir;
  // What RocksDB writes before it creates the database, and a volume's
  // lost+found, do not stand in the way.
  std::filesystem::create_directories(dir.path("fresh/lost+found"));
  std::ofstream(dir.path("fresh/LOCK")).put('\n');
  std::ofstream(dir.path("fresh/LOG")) << "info\n";
  CHECK(openLedger(dir.path("fresh"))->lastSeq() == 0);

  std::filesystem::create_directories(dir.path("other"));
  std::ofstream(dir.path("other/notes.txt")) << "mine\n";
  std::unique_ptr<Ledger> ledger;
  Status st = Ledger::open(dir.path("other"), Ledger::Options{}, &ledger);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(st.message(), Catch::Contains("notes.txt"));
  CHECK_FALSE(std::filesystem::exists(dir.path("other/CURRENT")));
}

TEST_CASE("damage in the middle of the write-ahead log fails the open instead of dropping commits",
          "[ledger][damage]") {
  TempDir dir;
  crashImage(dir.path("live"), dir.path("image"), 1000);
  const std::string wal = onlyWal(dir.path("image"));
  const auto size = std::filesystem::file_size(wal);
  {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    const char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put(static_cast<char>(c ^ 0x5a));
  }
  for (bool readOnly : {false, true, false}) {
    Ledger::Options o;
    o.readOnly = readOnly;
    std::unique_ptr<Ledger> ledger;
    Status st = Ledger::open(dir.path("image"), o, &ledger);
    INFO((readOnly ? "read-only: " : "writable: ") << st.toString());
    CHECK(st.isCorruption());
  }
  // Nothing truncated: the log is as it was.
  CHECK(std::filesystem::file_size(wal) == size);
}

TEST_CASE("a write-ahead log cut short after acknowledged commits is refused, naming the seqs lost",
          "[ledger][damage]") {
  TempDir dir;
  crashImage(dir.path("live"), dir.path("image"), 1000);
  const std::string wal = onlyWal(dir.path("image"));
  std::filesystem::resize_file(wal, std::filesystem::file_size(wal) / 2);
  for (bool readOnly : {false, true, false}) {
    Ledger::Options o;
    o.readOnly = readOnly;
    std::unique_ptr<Ledger> ledger;
    Status st = Ledger::open(dir.path("image"), o, &ledger);
    INFO((readOnly ? "read-only: " : "writable: ") << st.toString());
    CHECK(st.isCorruption());
    CHECK_THAT(st.message(), Catch::Contains("..1000 are lost") && Catch::Contains("ldb repair"));
  }
  // Deleting the head file is the deliberate way to accept the loss.
  REQUIRE(std::filesystem::remove(dir.path("image/ledger-head")));
  auto ledger = openLedger(dir.path("image"));
  CHECK(ledger->lastSeq() > 0);
  CHECK(ledger->lastSeq() < 1000);
}

TEST_CASE("the acknowledged head follows every synced commit and a clean close", "[ledger]") {
  TempDir dir;
  for (bool sync : {true, false}) {
    const std::string path = dir.path(sync ? "sync" : "nosync");
    Ledger::Options o;
    o.sync = sync;
    {
      auto ledger = openLedger(path, o);
      AppendResult r;
      REQUIRE(ledger->append({pending("a", 1), pending("b", 2)}, {}, &r).isOk());
    }
    {
      auto ledger = openLedger(path, o);
      CHECK(ledger->lastSeq() == 2);
      AppendResult r;
      REQUIRE(ledger->append({pending("c", 3)}, {}, &r).isOk());
    }
    std::ifstream in(path + "/ledger-head", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() == format::kAcknowledgedHeadSize);
    CHECK(format::decodeU64(std::string_view(bytes).substr(8)) == 3);
  }
}

// format.h: the projection format is this build's from creation, and a
// ledger whose projections an earlier build wrote keeps saying so after
// this build appends to it (only a rebuild makes them all this build's).
TEST_CASE("the projection format: recorded at creation, an earlier build's kept across appends",
          "[ledger]") {
  TempDir dir;
  AppendResult r;
  {
    auto ledger = openLedger(dir.path("l"));
    CHECK(ledger->projectionFormat() == format::kProjectionFormat);
    REQUIRE(ledger->append({pending("a", 100)}, {}, &r).isOk());
    REQUIRE(ledger->deleteRawForTesting(format::kMetaFamily, format::kProjectionFormatKey).isOk());
  }
  {
    auto ledger = openLedger(dir.path("l"));
    CHECK(ledger->projectionFormat() == format::kProjectionFormatBeforeItWasRecorded);
    REQUIRE(ledger->append({pending("b", 200)}, {}, &r).isOk());
  }
  CHECK(openLedger(dir.path("l"))->projectionFormat() ==
        format::kProjectionFormatBeforeItWasRecorded);
}

TEST_CASE("a cursor written beside the appender reads back; a read-only ledger refuses it",
          "[fleet][ledger]") {
  TempDir dir;
  {
    auto ledger = openLedger(dir.path("l"));
    Cursor c;
    c.position = 42;
    REQUIRE(ledger->putCursor("publish:LEDGER/c1", c).isOk());
    Cursor back;
    REQUIRE(ledger->cursor("publish:LEDGER/c1", &back).isOk());
    CHECK(back.position == 42);
  }
  Ledger::Options ro;
  ro.readOnly = true;
  ro.createIfMissing = false;
  auto reader = openLedger(dir.path("l"), ro);
  Cursor back;
  REQUIRE(reader->cursor("publish:LEDGER/c1", &back).isOk());
  CHECK(back.position == 42);
  CHECK_FALSE(reader->putCursor("publish:LEDGER/c1", back).isOk());
}

// format.h: an open killed between creating `ledger-head` and writing it
// (the fleet consumer creating a cluster's copy, killed) leaves it empty;
// the next open takes that as nothing acknowledged, as an absent file.
TEST_CASE("an empty ledger-head, left by an open killed before writing it, names nothing",
          "[ledger]") {
  TempDir dir;
  const std::string path = dir.path("l");
  AppendResult r;
  {
    auto ledger = openLedger(path);
    REQUIRE(ledger->append({pending("a", 1)}, {}, &r).isOk());
  }
  { std::ofstream truncate(path + "/ledger-head", std::ios::binary | std::ios::trunc); }
  {
    auto ledger = openLedger(path);
    CHECK(ledger->lastSeq() == 1);
  }
  std::ifstream in(path + "/ledger-head", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(bytes.size() == format::kAcknowledgedHeadSize);
  // A short file is still refused: it was written, then damaged.
  {
    std::ofstream shorten(path + "/ledger-head", std::ios::binary | std::ios::trunc);
    shorten << "LEDG";
  }
  std::unique_ptr<Ledger> refused;
  Ledger::Options o;
  CHECK(Ledger::open(path, o, &refused).isCorruption());
}
