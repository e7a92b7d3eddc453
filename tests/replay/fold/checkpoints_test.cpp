// Checkpoints: the state at any seq equals a
// full replay to it; dropping or corrupting checkpoints changes no answer;
// corruption is detected, skipped with a warning, and fails `verify`.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <xxhash.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "ledger/format.h"
#include "replay/fold/checkpoints.h"
#include "schema/checkpoint.capnp.h"
#include "tests/tamper_support.h"
#include "tests/test_support.h"
#include "tools/render/report_format.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

std::string reportAt(const Ledger& ledger, std::uint64_t seq, bool useCheckpoints,
                     int* badCheckpoints = nullptr) {
  replay::FoldOptions fo;
  fo.useCheckpoints = useCheckpoints;
  fo.onBadCheckpoint = [&](std::uint64_t, const std::string&) {
    if (badCheckpoints != nullptr) ++*badCheckpoints;
  };
  replay::ClusterState s = replay::Replayer(ledger).foldTo(seq, fo);
  return render::reportToJson(replay::buildReport(s)).dump();
}

// Every version held in a chunk of copies, by the chunk's key; checks each
// chunk decodes and its seqs ascend.
std::map<std::string, std::vector<std::uint64_t>> chunkSeqs(const Ledger& ledger) {
  std::map<std::string, std::vector<std::uint64_t>> out;
  REQUIRE(ledger
              .scanRaw(format::kCheckpointObjectsFamily,
                       [&](std::string_view key, std::string_view value) {
                         REQUIRE(key.size() == 12);
                         REQUIRE(value.size() > format::kChunkHeaderSize);
                         auto payload = value.substr(format::kChunkHeaderSize);
                         auto words = kj::heapArray<capnp::word>(payload.size() / 8);
                         std::memcpy(words.begin(), payload.data(), payload.size());
                         capnp::FlatArrayMessageReader reader(words.asPtr());
                         auto chunk = reader.getRoot<schema::CheckpointChunk>();
                         REQUIRE(chunk.getSeqs().size() == chunk.getRecords().size());
                         auto& seqs = out[std::string(key)];
                         for (auto s : chunk.getSeqs()) seqs.push_back(s);
                         CHECK(std::is_sorted(seqs.begin(), seqs.end()));
                       })
              .isOk());
  return out;
}

// The checkpoint at `seq`, decoded: where it says each object is.
std::vector<replay::ObjectRef> refsOf(const Ledger& ledger, std::uint64_t seq) {
  std::string bytes;
  REQUIRE(ledger.getRaw(format::kCheckpointsFamily, format::seqKey(seq), &bytes).isOk());
  std::vector<replay::ObjectRef> refs;
  replay::ClusterState::restoreReferences(bytes, nullptr,
                                          [&](std::vector<replay::ObjectRef> r) { refs = r; });
  return refs;
}

// The demo cluster's ledger with checkpoints every `interval` records.
std::unique_ptr<Ledger> demoLedgerWithCheckpoints(const TempDir& dir, std::uint64_t interval) {
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  replay::writeCheckpoints(*ledger, interval);
  return ledger;
}

}  // namespace

TEST_CASE("state at every seq equals a full replay to it, with checkpoints every 3 records",
          "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  REQUIRE(ledger->lastSeq() > 30);
  CHECK(replay::writeCheckpoints(*ledger, 3) == ledger->lastSeq() / 3);
  // Most of what they name is older than 3 records: read from copies.
  REQUIRE(chunkSeqs(*ledger).size() > 10);
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    INFO("seq " << seq);
    CHECK(reportAt(*ledger, seq, true) == reportAt(*ledger, seq, false));
  }
  auto v = replay::verifyCheckpoints(*ledger);
  CHECK(v.firstBadSeq == 0);
  CHECK(v.checked == ledger->lastSeq() / 3);
}

TEST_CASE("writing checkpoints is incremental", "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  // Progress: each checkpoint's seq, of the last seq.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  const auto first = replay::writeCheckpoints(
      *ledger, 10, [&](std::uint64_t seq, std::uint64_t last) { calls.emplace_back(seq, last); });
  CHECK(first == ledger->lastSeq() / 10);
  REQUIRE(calls.size() == first);
  CHECK(calls.front() == std::pair<std::uint64_t, std::uint64_t>{10, ledger->lastSeq()});
  CHECK(calls.back().first == first * 10);
  CHECK(replay::writeCheckpoints(*ledger, 10) == 0);
}

TEST_CASE("dropped checkpoints change no answer", "[checkpoints]") {
  TempDir dir;
  auto ledger = demoLedgerWithCheckpoints(dir, 5);
  const std::string with = reportAt(*ledger, 27, true);
  REQUIRE(ledger->dropCheckpoints().isOk());
  std::uint64_t found = 1;
  std::string bytes;
  REQUIRE(ledger->checkpointAtOrBefore(ledger->lastSeq(), &found, &bytes).isOk());
  CHECK(found == 0);
  CHECK(reportAt(*ledger, 27, true) == with);
}

TEST_CASE("a corrupted checkpoint is skipped with a warning, same answers, and verify fails",
          "[checkpoints]") {
  TempDir dir;
  auto ledger = demoLedgerWithCheckpoints(dir, 5);
  const std::string expected = reportAt(*ledger, 27, false);
  std::string bytes;
  REQUIRE(ledger->getRaw(format::kCheckpointsFamily, format::seqKey(25), &bytes).isOk());
  bytes[bytes.size() / 2] ^= 0x40;
  REQUIRE(ledger->putRawForTesting(format::kCheckpointsFamily, format::seqKey(25), bytes).isOk());
  int bad = 0;
  CHECK(reportAt(*ledger, 27, true, &bad) == expected);
  CHECK(bad == 1);
  auto v = replay::verifyCheckpoints(*ledger);
  CHECK(v.firstBadSeq == 25);
  CHECK_THAT(v.problem, Catch::Contains("checksum"));
}

TEST_CASE("a checkpoint that disagrees with the log is caught by verify", "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, demoStream());
  // A well-formed checkpoint of the state at seq 9, stored as if for seq 10.
  replay::ClusterState nine =
      replay::Replayer(*ledger).foldTo(9, replay::FoldOptions{false, {}, {}, {}});
  REQUIRE(ledger->putCheckpoint(10, nine.serialize()).isOk());
  auto v = replay::verifyCheckpoints(*ledger);
  CHECK(v.firstBadSeq == 10);
}

TEST_CASE("a record a checkpoint names that does not decode fails the query with its seq",
          "[checkpoints]") {
  TempDir dir;
  auto ledger = demoLedgerWithCheckpoints(dir, 5);
  // A record the checkpoint at 25 references (the version of a live object).
  replay::ClusterState at25 =
      replay::Replayer(*ledger).foldTo(25, replay::FoldOptions{false, {}, {}, {}});
  std::uint64_t referenced = 0;
  for (std::size_t k = 0; k < static_cast<std::size_t>(replay::ObjectKind::kCount); ++k) {
    for (const auto& [key, obj] : at25.objects(static_cast<replay::ObjectKind>(k))) {
      referenced = std::max(referenced, obj->seq());
    }
  }
  REQUIRE(referenced > 0);
  REQUIRE(ledger
              ->putRawForTesting(format::kProjectionFamily, format::seqKey(referenced),
                                 std::string(24, '\xff'))
              .isOk());
  int bad = 0;
  // The checkpoint is blamed first, then the fold from the start meets the
  // same record: the error names it.
  CHECK_THROWS_WITH(reportAt(*ledger, 27, true, &bad),
                    Catch::Contains("seq " + std::to_string(referenced)));
  CHECK(bad == 1);
}

TEST_CASE("each long-lived version is copied once, and later checkpoints name that copy",
          "[checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  // Two ingest runs, each followed by writing checkpoints (as ledger-ingest
  // does): the second run resumes from the copies the first one made.
  const std::string stream = demoStream();
  const std::size_t half = stream.find('\n', stream.size() / 2) + 1;
  ingestText(*ledger, stream.substr(0, half));
  const std::uint64_t firstRun = replay::writeCheckpoints(*ledger, 4);
  REQUIRE(firstRun > 0);
  ingestText(*ledger, stream.substr(half));
  REQUIRE(replay::writeCheckpoints(*ledger, 4) > 0);

  std::set<std::uint64_t> copied;
  for (const auto& [key, seqs] : chunkSeqs(*ledger)) {
    for (std::uint64_t seq : seqs) {
      INFO("seq " << seq);
      CHECK(copied.insert(seq).second);  // never copied twice
    }
  }
  REQUIRE(!copied.empty());
  // The newest checkpoint names copies made by earlier ones, including the
  // first run's, and each copied version it names is in the chunk it says.
  const std::uint64_t newest = ledger->lastSeq() / 4 * 4;
  const auto chunks = chunkSeqs(*ledger);
  bool fromFirstRun = false;
  for (const replay::ObjectRef& r : refsOf(*ledger, newest)) {
    if (r.copy.checkpointSeq == 0) {
      // Named by seq: young enough not to be copied yet.
      CHECK(r.seq + 4 > newest);
      continue;
    }
    CHECK(r.copy.checkpointSeq <= newest);
    fromFirstRun = fromFirstRun || r.copy.checkpointSeq <= firstRun * 4;
    auto chunk = chunks.find(format::checkpointChunkKey(r.copy.checkpointSeq, r.copy.chunk));
    REQUIRE(chunk != chunks.end());
    CHECK(std::count(chunk->second.begin(), chunk->second.end(), r.seq) == 1);
  }
  CHECK(fromFirstRun);
  // And the answers are a full replay's.
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    INFO("seq " << seq);
    CHECK(reportAt(*ledger, seq, true) == reportAt(*ledger, seq, false));
  }
  CHECK(replay::verifyCheckpoints(*ledger).firstBadSeq == 0);
}

TEST_CASE("dropping checkpoints drops their copies", "[checkpoints]") {
  TempDir dir;
  auto ledger = demoLedgerWithCheckpoints(dir, 5);
  REQUIRE(!chunkSeqs(*ledger).empty());
  REQUIRE(ledger->dropCheckpoints().isOk());
  CHECK(chunkSeqs(*ledger).empty());
  // Rewritten from scratch, they copy again.
  CHECK(replay::writeCheckpoints(*ledger, 5) == ledger->lastSeq() / 5);
  CHECK(!chunkSeqs(*ledger).empty());
}

TEST_CASE("a corrupted chunk of copies is skipped with a warning, same answers, and verify fails",
          "[checkpoints]") {
  TempDir dir;
  auto ledger = demoLedgerWithCheckpoints(dir, 5);
  const auto chunks = chunkSeqs(*ledger);
  REQUIRE(!chunks.empty());
  // The first chunk, written by the checkpoint at `at` and named by it.
  const std::string key = chunks.begin()->first;
  const std::uint64_t at = format::decodeU64(key);
  const std::uint64_t query = std::min(at + 2, ledger->lastSeq());
  const std::string expected = reportAt(*ledger, query, false);
  // The query skips the checkpoint with a warning and answers the same;
  // verify blames it.
  auto checkSkipped = [&](const std::string& problem) {
    int bad = 0;
    CHECK(reportAt(*ledger, query, true, &bad) == expected);
    CHECK(bad == 1);
    auto v = replay::verifyCheckpoints(*ledger);
    CHECK(v.firstBadSeq == at);
    CHECK_THAT(v.problem, Catch::Contains(problem));
  };

  SECTION("a flipped byte fails the chunk's checksum") {
    std::string bytes;
    REQUIRE(ledger->getRaw(format::kCheckpointObjectsFamily, key, &bytes).isOk());
    bytes[bytes.size() - 9] ^= 0x20;
    REQUIRE(ledger->putRawForTesting(format::kCheckpointObjectsFamily, key, bytes).isOk());
    checkSkipped("checksum");
  }
  SECTION("a chunk that does not hold the versions named (checksum intact)") {
    // Well-formed and correctly summed, but empty: the reader finds the
    // versions missing.
    capnp::MallocMessageBuilder message;
    auto chunk = message.initRoot<schema::CheckpointChunk>();
    chunk.initSeqs(0);
    chunk.initRecords(0);
    auto words = capnp::messageToFlatArray(message);
    const std::string payload(reinterpret_cast<const char*>(words.asBytes().begin()),
                              words.asBytes().size());
    std::string bytes = format::encodeU64(XXH3_64bits(payload.data(), payload.size()));
    bytes += payload;
    REQUIRE(ledger->putRawForTesting(format::kCheckpointObjectsFamily, key, bytes).isOk());
    checkSkipped("has no seq");
  }
}

TEST_CASE("a checkpoint edited where its digest does not look, checksum made anew, fails verify",
          "[checkpoints][verify]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  tamper::smallLedger(*ledger);
  REQUIRE(replay::verifyCheckpoints(*ledger).firstBadSeq == 0);
  SECTION("the checkpoint's time") {
    tamper::checkpointTime(*ledger, 4);
    const auto v = replay::verifyCheckpoints(*ledger);
    CHECK(v.firstBadSeq == 4);
    CHECK_THAT(v.problem, Catch::Contains("fresh replay"));
  }
  SECTION("a copy's record header in checkpoint_objects") {
    const std::uint64_t at = tamper::copyTime(*ledger);
    const auto v = replay::verifyCheckpoints(*ledger);
    CHECK(v.firstBadSeq == at);
    CHECK_THAT(v.problem, Catch::Contains("is not that seq's projection record"));
  }
}
