// Edits to one value of a ledger's derived families that keep RocksDB's own
// checksums valid (Ledger::putRawForTesting), as someone with write access
// to the database could make them: what `verify` has to catch by deriving
// the data again from the log (ledger/verify.h, replay/fold/checkpoints.h).
//
// Test-only; not thread-safe. Helpers throw (via Catch2 REQUIRE) on failure.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <xxhash.h>

#include <cstring>
#include <string>

#include "ingest/ingester.h"
#include "ingest/projector.h"
#include "ledger/archive.h"
#include "ledger/format.h"
#include "ledger/sha256.h"
#include "ledger/verify.h"
#include "replay/fold/checkpoints.h"
#include "schema/checkpoint.capnp.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

namespace ledger::testing::tamper {

// The words of `bytes` (RocksDB values are not aligned).
inline kj::Array<capnp::word> wordsOf(std::string_view bytes) {
  auto words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), words.size() * sizeof(capnp::word));
  return words;
}

inline std::string bytesOf(capnp::MessageBuilder& message) {
  auto words = capnp::messageToFlatArray(message);
  return std::string(reinterpret_cast<const char*>(words.asBytes().begin()),
                     words.asBytes().size());
}

// A small cluster whose ClusterQueue "cq" has 8Gi of memory and `workloads`
// Workloads, checkpointed every 2 records (so the later checkpoints hold
// copies). Returns the seq of the ClusterQueue's record.
inline std::uint64_t smallLedger(Ledger& ledger, int workloads = 6) {
  using namespace k8s;
  std::string events =
      event("ADDED", resourceFlavor("default")) +
      event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"memory", "8Gi"}}}})) +
      event("ADDED", localQueue("team", "lq", "cq"));
  for (int i = 0; i < workloads; ++i) {
    events += event(
        "ADDED",
        workload("team", "w" + std::to_string(i), "lq",
                 Json::array({podSet(
                     "main", 1,
                     {{"containers", Json::array({container("c", {{"memory", "1Gi"}})})}})})));
  }
  REQUIRE(ingestText(ledger, events).rejected == 0);
  REQUIRE(replay::writeCheckpoints(ledger, 2) > 0);
  return lastSeqOfKind(ledger, "ClusterQueue");
}

// The ClusterQueue's projection says 9Gi where its record says 8Gi.
inline void projection(Ledger& ledger, std::uint64_t cqSeq) {
  using namespace k8s;
  Record record;
  REQUIRE(ledger.read(cqSeq, &record).isOk());
  const std::string edited = buildProjectedRecord(
      record,
      ingest::projectObject(clusterQueue("cq", "v1beta2", "", {{"default", {{"memory", "9Gi"}}}})));
  REQUIRE(ledger.putRawForTesting(format::kProjectionFamily, format::seqKey(cqSeq), edited).isOk());
}

// Record `from`'s dedupe key made to name record `to` (another object).
inline std::string events(Ledger& ledger, std::uint64_t from, std::uint64_t to) {
  Record record;
  REQUIRE(ledger.read(from, &record).isOk());
  const std::string key = ingest::dedupeKeyOf(record);
  REQUIRE(!key.empty());
  REQUIRE(ledger.putRawForTesting(format::kEventsFamily, key, format::seqKey(to)).isOk());
  return key;
}

// The live entry of record `seq`'s object with another resourceVersion.
inline void live(Ledger& ledger, std::uint64_t seq) {
  Record record;
  REQUIRE(ledger.read(seq, &record).isOk());
  std::string value = record.identity.uid;
  value.push_back('\0');
  value += record.identity.resourceVersion + "0";
  REQUIRE(ledger.putRawForTesting(format::kLiveFamily, record.identity.objectKey(), value).isOk());
}

// A second time-index entry for record `seq`, a second before its time: a
// query "as of" then would stop at it.
inline void timeIndex(Ledger& ledger, std::uint64_t seq) {
  Record record;
  REQUIRE(ledger.read(seq, &record).isOk());
  REQUIRE(ledger
              .putRawForTesting(format::kTimeIndexFamily,
                                format::timeKey(record.timeNs - 1000000000, seq), "")
              .isOk());
}

// The checkpoint at `seq` claims another time, with its SHA-256 made anew.
inline void checkpointTime(Ledger& ledger, std::uint64_t seq) {
  std::string bytes;
  REQUIRE(ledger.getRaw(format::kCheckpointsFamily, format::seqKey(seq), &bytes).isOk());
  const auto words = wordsOf(std::string_view(bytes).substr(format::kCheckpointChecksumSize));
  capnp::FlatArrayMessageReader reader(words);
  capnp::MallocMessageBuilder message;
  message.setRoot(reader.getRoot<schema::Checkpoint>());
  auto root = message.getRoot<schema::Checkpoint>();
  root.setTimeNs(root.getTimeNs() + 3600LL * 1000000000LL);
  const std::string payload = bytesOf(message);
  const Digest sum = Sha256::of(payload);
  std::string edited(reinterpret_cast<const char*>(sum.data()), sum.size());
  edited += payload;
  REQUIRE(ledger.putRawForTesting(format::kCheckpointsFamily, format::seqKey(seq), edited).isOk());
}

// The first copy in the first chunk of checkpoint_objects says its record
// is an hour later, with the chunk's XXH3 made anew. Returns the seq of the
// checkpoint that wrote the chunk.
inline std::uint64_t copyTime(Ledger& ledger) {
  std::string key, value;
  REQUIRE(ledger
              .scanRaw(format::kCheckpointObjectsFamily,
                       [&](std::string_view k, std::string_view v) {
                         if (key.empty()) {
                           key = k;
                           value = v;
                         }
                       })
              .isOk());
  REQUIRE(!key.empty());
  const auto words = wordsOf(std::string_view(value).substr(format::kChunkHeaderSize));
  capnp::FlatArrayMessageReader reader(words);
  const auto chunk = reader.getRoot<schema::CheckpointChunk>();
  capnp::MallocMessageBuilder message;
  message.setRoot(chunk);
  auto records = message.getRoot<schema::CheckpointChunk>().getRecords();
  REQUIRE(records.size() > 0);
  const auto copyWords = wordsOf(
      std::string_view(reinterpret_cast<const char*>(records[0].begin()), records[0].size()));
  capnp::FlatArrayMessageReader copyReader(copyWords);
  capnp::MallocMessageBuilder copy;
  copy.setRoot(copyReader.getRoot<schema::ProjectedRecord>());
  auto header = copy.getRoot<schema::ProjectedRecord>();
  header.setTimeNs(header.getTimeNs() + 3600LL * 1000000000LL);
  const std::string edited = bytesOf(copy);
  records.set(0, kj::arrayPtr(reinterpret_cast<const kj::byte*>(edited.data()), edited.size()));
  const std::string payload = bytesOf(message);
  std::string stored = format::encodeU64(XXH3_64bits(payload.data(), payload.size()));
  stored += payload;
  REQUIRE(ledger.putRawForTesting(format::kCheckpointObjectsFamily, key, stored).isOk());
  return format::decodeU64(key);
}

// What a build before the projection format was recorded (ledger/format.h)
// left: a Namespace under its dedupe key without the group and kind, a
// manifest's ConfigMap under its content key "upsert", projections another
// projector made (here: the Namespace's with a label its JSON does not
// have), and no projection format in `meta`.
inline void earlierBuild(Ledger& ledger) {
  const Json ns = {
      {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", meta("", "a", "uid-a", "1")}};
  Json older = ns;
  older["metadata"]["labels"] = {{"projected", "by an older projector"}};
  const Json cm = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"namespace", "team"}, {"name", "c"}}}};
  std::vector<PendingRecord> records(2);
  for (PendingRecord& r : records) {
    r.type = EventType::kAdded;
    r.timeNs = 1700000000LL * 1000000000LL;
  }
  records[0].identity = ingest::identityOf(ns);
  records[0].objectJson = ns.dump();
  records[0].projection = ingest::projectObject(older);
  records[0].dedupeKey = std::string(
      "e\0uid-a\0"
      "1\0ADDED",
      15);
  records[1].identity = ingest::identityOf(cm);
  records[1].objectJson = cm.dump();
  records[1].projection = ingest::projectObject(cm);
  records[1].dedupeKey = "c" + std::string(1, '\0') + records[1].identity.objectKey() +
                         std::string(1, '\0') + "upsert" + std::string(1, '\0') +
                         toHex(Sha256::of(records[1].objectJson));
  AppendResult appended;
  REQUIRE(ledger.append(records, {}, &appended).isOk());
  REQUIRE(ledger.deleteRawForTesting(format::kMetaFamily, format::kProjectionFormatKey).isOk());
}

// The verification options `ledger-replay verify` uses by default.
inline VerifyOptions ingestDerivations() {
  VerifyOptions vo;
  vo.project = [](const Record& r) { return ingest::projectJsonText(r.objectJson); };
  vo.dedupeKey = ingest::dedupeKeyOf;
  vo.legacyDedupeKeys = ingest::legacyDedupeKeysOf;
  return vo;
}

// Cuts `live` after `seq` as `ledger-replay archive` does, into dir `to`.
inline ArchiveCut cutAfter(Ledger& live, std::uint64_t seq, const std::string& to) {
  ArchiveOptions o;
  o.derive = ingestDerivations();
  ArchiveSeal seal;
  REQUIRE(writeArchive(live, seq, to, o, &seal).isOk());
  replay::ClusterState state = replay::Replayer(live).foldTo(seq);
  replay::CopiedVersions copies;
  const auto chunks = replay::copyLongLived(state, 0, copies);
  std::int64_t first = 0;
  REQUIRE(live.timeOf(1, &first).isOk());
  ArchiveCut cut{seq, seal.lastHash, seal.lastTimeNs, first, to};
  const Status st = live.cutArchived(cut, state.serialize(copies), chunks);
  INFO(st.toString());
  REQUIRE(st.isOk());
  return cut;
}

}  // namespace ledger::testing::tamper
