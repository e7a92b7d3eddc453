// The programs on a damaged ledger (tests/replay/fold/damaged_ledger_test.cpp for
// the library): a stored projection that folds but does not decode deeper
// down ends `ledger-replay` with exit 3 and a message, not an abort, and
// `ledger-replay verify` names the record. A lost CURRENT or manifest, a
// damaged, cut-short or lost write-ahead log: exit 3 from every program
// (verify and ingest name the same lost seqs), the files left as they were. A
// busy or unreadable ledger: exit 1 from every program.
// An edit of any derived family that keeps RocksDB's checksums valid fails
// `verify` with exit 3.
//
// Runs the real ledger-replay, ledger-ingest and ledger-query binaries (paths
// in $LEDGER_REPLAY, $LEDGER_INGEST, $LEDGER_QUERY).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <filesystem>
#include <functional>

#include "ledger/archive.h"
#include "replay/kueue/usage_rollups.h"
#include "schema/k8s/rfc3339.h"
#include "tests/kueue_objects.h"
#include "tests/tamper_support.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

// `count` ConfigMaps as ADDED events in a file under `dir`; returns its path.
std::string configMapEvents(const TempDir& dir, const std::string& name, int count) {
  const std::string path = dir.path(name);
  std::ofstream out(path);
  for (int i = 0; i < count; ++i) {
    const std::string n = name + "-" + std::to_string(i);
    out << event("ADDED", {{"apiVersion", "v1"},
                           {"kind", "ConfigMap"},
                           {"metadata", meta("team", n, "uid-" + n, std::to_string(100 + i))},
                           {"data", {{"k", std::string(100, 'v')}}}});
  }
  return path;
}

std::vector<std::string> filesIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(suffix) || (suffix == "MANIFEST" && name.starts_with("MANIFEST-"))) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("ledger-replay on a damaged projection exits 3 with a message; verify names the record",
          "[crash][verify]") {
  const std::string binary = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  std::uint64_t victim = 0;
  {
    auto ledger = openLedger(dir.path("l"));
    const std::string events =
        event("ADDED", resourceFlavor("default")) +
        event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"cpu", 10}}}}));
    REQUIRE(ingestText(*ledger, events).rejected == 0);
    victim = lastSeqOfKind(*ledger, "ClusterQueue");
    cutLastWordOfProjection(*ledger, victim);
  }
  const std::string ledgerFlag = " --ledger " + dir.path("l");

  const CommandRun report = runCommand(binary + ledgerFlag + " --no-checkpoints -o json");
  INFO(report.output);
  CHECK(report.exitCode == 3);
  CHECK(report.output.find("does not decode") != std::string::npos);

  const CommandRun verify = runCommand(binary + ledgerFlag + " verify");
  INFO(verify.output);
  CHECK(verify.exitCode == 3);
  CHECK(verify.output.find("projection does not decode") != std::string::npos);
  CHECK(verify.output.find("\"firstBadSeq\": " + std::to_string(victim)) != std::string::npos);
}

TEST_CASE("a ledger whose CURRENT or manifest is lost: ingest and verify exit 3 and keep its files",
          "[crash][damage]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  const std::string events = configMapEvents(dir, "cm", 50);
  for (const std::string lost : {"CURRENT", "MANIFEST"}) {
    const std::string ledgerDir = dir.path("ledger-" + lost);
    const std::string flags = " --ledger " + ledgerDir + " --from " + events;
    REQUIRE(runCommand(ingest + flags).exitCode == 0);
    const auto tables = filesIn(ledgerDir, ".sst");
    REQUIRE_FALSE(tables.empty());
    for (const auto& name : filesIn(ledgerDir, lost)) {
      std::filesystem::remove(std::filesystem::path(ledgerDir) / name);
    }
    // Twice: the first attempt must not leave anything the second would take
    // for a new, empty ledger.
    for (int attempt = 0; attempt < 2; ++attempt) {
      const CommandRun again = runCommand(ingest + flags);
      INFO(lost << " lost, attempt " << attempt << ": " << again.output);
      CHECK(again.exitCode == 3);
      CHECK(again.output.find("ldb repair") != std::string::npos);
      CHECK(filesIn(ledgerDir, ".sst") == tables);
    }
    CHECK(filesIn(ledgerDir, lost).empty());
    const CommandRun verify = runCommand(replay + " --ledger " + ledgerDir + " verify");
    INFO(verify.output);
    CHECK(verify.exitCode == 3);
  }
}

TEST_CASE("a damaged, cut-short or lost write-ahead log: ingest and verify exit 3, nothing reused",
          "[crash][damage]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  std::string text;
  for (int i = 0; i < 600; ++i) {
    const std::string n = "cm-" + std::to_string(i);
    text += event("ADDED", {{"apiVersion", "v1"},
                            {"kind", "ConfigMap"},
                            {"metadata", meta("team", n, "uid-" + n, std::to_string(100 + i))}});
  }
  {
    // Commits synced but never closed: a crash's image, every commit only in
    // the write-ahead log.
    auto ledger = openLedger(dir.path("live"), /*sync=*/true);
    REQUIRE(ingestText(*ledger, text).stats.recorded == 600);
    REQUIRE(filesIn(dir.path("live"), ".sst").empty());
    std::filesystem::copy(dir.path("live"), dir.path("flipped"),
                          std::filesystem::copy_options::recursive);
    std::filesystem::copy(dir.path("live"), dir.path("cut"),
                          std::filesystem::copy_options::recursive);
    std::filesystem::copy(dir.path("live"), dir.path("deleted"),
                          std::filesystem::copy_options::recursive);
  }
  const std::string more = configMapEvents(dir, "more", 5);
  for (const std::string damage : {"flipped", "cut", "deleted"}) {
    const std::string ledgerDir = dir.path(damage);
    auto logs = filesIn(ledgerDir, ".log");
    REQUIRE(logs.size() == 1);
    const std::string wal = ledgerDir + "/" + logs.front();
    const auto size = std::filesystem::file_size(wal);
    if (damage == "deleted") {
      // Every acknowledged record was in this log: the store alone looks
      // empty and uninitialised, the acknowledged head says otherwise.
      std::filesystem::remove(wal);
      logs.clear();
    } else if (damage == "flipped") {
      std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(size / 2));
      const char c = static_cast<char>(f.get());
      f.seekp(static_cast<std::streamoff>(size / 2));
      f.put(static_cast<char>(c ^ 0x5a));
    } else {
      std::filesystem::resize_file(wal, size / 2);
    }
    const auto damagedSize = logs.empty() ? 0 : std::filesystem::file_size(wal);
    const std::string lost = damage == "deleted" ? "seqs 1..600 are lost" : "..600 are lost";
    // verify reads the store as ingest does and says the same, before
    // ingest has touched it and after.
    const auto verifies = [&](const char* when) {
      const CommandRun verify = runCommand(replay + " --ledger " + ledgerDir + " verify");
      INFO(damage << ", verify " << when << ": " << verify.output);
      CHECK(verify.exitCode == 3);
      if (damage != "flipped") CHECK(verify.output.find(lost) != std::string::npos);
    };
    verifies("first");
    for (int attempt = 0; attempt < 2; ++attempt) {
      const CommandRun again = runCommand(ingest + " --ledger " + ledgerDir + " --from " + more);
      INFO(damage << ", attempt " << attempt << ": " << again.output);
      CHECK(again.exitCode == 3);
      if (damage != "flipped") CHECK(again.output.find(lost) != std::string::npos);
    }
    verifies("after ingest");
    CHECK(filesIn(ledgerDir, ".log") == logs);
    if (!logs.empty()) CHECK(std::filesystem::file_size(wal) == damagedSize);
  }
}

TEST_CASE("a busy ledger is exit 1 from every program that writes; verify reads beside the writer",
          "[crash][exit-codes]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  const std::string events = configMapEvents(dir, "cm", 20);
  const std::string flag = " --ledger " + dir.path("l");
  REQUIRE(runCommand(ingest + flag + " --from " + events).exitCode == 0);
  auto held = openLedger(dir.path("l"));  // RocksDB's LOCK, held by this process
  for (const std::string& command :
       {ingest + flag + " --from " + events, replay + flag + " checkpoint",
        replay + flag + " compact", replay + flag + " rebuild-projection"}) {
    const CommandRun r = runCommand(command);
    INFO(command << ": " << r.output);
    CHECK(r.exitCode == 1);
    CHECK(r.output.find("busy") != std::string::npos);
  }
  const CommandRun verify = runCommand(replay + flag + " verify");
  INFO(verify.output);
  CHECK(verify.exitCode == 0);
}

TEST_CASE("a ledger this user may not read or write is exit 1 from every program",
          "[crash][exit-codes]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  // Root reads and writes whatever the mode bits say: the programs then run
  // as nobody through setpriv(1), when it is there.
  std::string as;
  if (::geteuid() == 0) {
    if (runCommand("setpriv --version").exitCode != 0) {
      WARN("skipped: running as root without setpriv(1), file modes cannot deny access");
      return;
    }
    as = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  TempDir dir;
  const std::string events = configMapEvents(dir, "cm", 20);
  ::chmod(events.c_str(), 0644);
  ::chmod(dir.path().c_str(), 0755);
  const std::string ledgerDir = dir.path("l");
  const std::string flag = " --ledger " + ledgerDir;
  REQUIRE(runCommand(ingest + flag + " --from " + events).exitCode == 0);
  // 0555: readable, not writable (RocksDB cannot create its LOCK); 0: neither.
  for (const mode_t mode : {mode_t{0555}, mode_t{0}}) {
    REQUIRE(::chmod(ledgerDir.c_str(), mode) == 0);
    for (const std::string& command :
         {as + ingest + flag + " --from " + events, as + replay + flag + " checkpoint"}) {
      const CommandRun r = runCommand(command);
      INFO("mode " << mode << ", " << command << ": " << r.output);
      CHECK(r.exitCode == 1);
      CHECK(r.output.find("ermission denied") != std::string::npos);
    }
    if (mode == 0) {
      const CommandRun r = runCommand(as + replay + flag + " verify");
      INFO("mode 0, verify: " << r.output);
      CHECK(r.exitCode == 1);
    }
  }
  REQUIRE(::chmod(ledgerDir.c_str(), 0755) == 0);
}
// Each derived family edited with RocksDB's checksums intact
// (tests/tamper_support.h): `verify` derives it again from the log, exits 3
// and names the record (or the family's key).
TEST_CASE("ledger-replay verify catches an edit of each derived family and exits 3",
          "[crash][verify]") {
  const std::string binary = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  std::uint64_t cq = 0;
  {
    auto ledger = openLedger(dir.path("l"));
    cq = tamper::smallLedger(*ledger);
  }
  const std::string verifyCommand = binary + " --ledger " + dir.path("l") + " verify -o json";
  {
    const CommandRun sound = runCommand(verifyCommand);
    INFO(sound.output);
    REQUIRE(sound.exitCode == 0);
  }
  // Edits one family of a copy of the sound ledger; verify must fail with
  // `expected` in its output.
  auto check = [&](const std::function<void(Ledger&)>& edit, const std::string& expected) {
    const std::string copy = dir.path("edited");
    std::filesystem::remove_all(copy);
    std::filesystem::copy(dir.path("l"), copy);
    {
      auto ledger = openLedger(copy);
      edit(*ledger);
    }
    const CommandRun verify = runCommand(binary + " --ledger " + copy + " verify -o json");
    INFO(verify.output);
    CHECK(verify.exitCode == 3);
    CHECK(verify.output.find(expected) != std::string::npos);
  };
  const std::string atCq = "\"firstBadSeq\": " + std::to_string(cq);
  SECTION("projection: 9Gi where the log says 8Gi, checkpoints rewritten from it") {
    // `checkpoint --rewrite` after the edit: the checkpoints agree with the
    // projection, and only the log can tell.
    check(
        [&](Ledger& l) {
          tamper::projection(l, cq);
          REQUIRE(l.dropCheckpoints().isOk());
          REQUIRE(replay::writeCheckpoints(l, 2) > 0);
        },
        atCq);
  }
  SECTION("events: a dedupe key naming another object's record") {
    check([&](Ledger& l) { tamper::events(l, cq, cq + 1); }, "\"family\": \"events\"");
  }
  SECTION("live: another resourceVersion") {
    check([&](Ledger& l) { tamper::live(l, cq); }, atCq);
  }
  SECTION("time_index: a second entry at an earlier time") {
    check([&](Ledger& l) { tamper::timeIndex(l, cq); }, atCq);
  }
  SECTION("checkpoints: another time, checksum made anew") {
    check([&](Ledger& l) { tamper::checkpointTime(l, 2); }, "\"firstBadSeq\": 2");
  }
  SECTION("checkpoint_objects: a copy's header edited, checksum made anew") {
    std::uint64_t at = 0;
    check([&](Ledger& l) { at = tamper::copyTime(l); }, "is not that seq's projection record");
    CHECK(at != 0);
  }
}

// A ledger an earlier build wrote is not damaged: verify names the rebuild
// instead of an edit, and a report from its older projections says so;
// after `rebuild-projection` both are quiet.
TEST_CASE("an earlier build's ledger: verify and reports name the rebuild, not an edit", "[cli]") {
  const std::string replay = programFromEnv("LEDGER_REPLAY") + " --ledger ";
  TempDir dir;
  tamper::earlierBuild(*openLedger(dir.path("l")));
  const CommandRun verify = runCommand(replay + dir.path("l") + " verify");
  INFO(verify.output);
  CHECK(verify.exitCode == 3);
  CHECK_THAT(verify.output, Catch::Contains("written by an older projector") &&
                                Catch::Contains("run `ledger-replay rebuild-projection`"));
  CHECK_THAT(runCommand(replay + dir.path("l")).output, Catch::Contains("older projector"));
  REQUIRE(runCommand(replay + dir.path("l") + " rebuild-projection").exitCode == 0);
  CHECK(runCommand(replay + dir.path("l") + " verify").exitCode == 0);
  const CommandRun report = runCommand(replay + dir.path("l"));
  CHECK(report.exitCode == 0);
  CHECK_THAT(report.output, !Catch::Contains("older projector"));
}

TEST_CASE(
    "an edited usage rollup with a valid checksum fails verify; checkpoint --rewrite mends it",
    "[crash][verify][rollups]") {
  const std::string replayBinary = programFromEnv("LEDGER_REPLAY");
  const std::string query = programFromEnv("LEDGER_QUERY");
  TempDir dir;
  const std::int64_t hour = 3600LL * 1000000000LL;
  const std::int64_t start = *tryParseRfc3339("2026-11-01T00:00:00Z");
  {
    auto ledger = openLedger(dir.path("l"));
    // cq holds 10 CPUs from midnight; a flavor at 03:00 closes hours 0-2.
    REQUIRE(ingestText(
                *ledger,
                event("ADDED", resourceFlavor("default"), "2026-11-01T00:00:00Z") +
                    event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"cpu", 10}}}}),
                          "2026-11-01T00:00:00Z") +
                    event("ADDED", resourceFlavor("late"), "2026-11-01T03:00:00Z"))
                .rejected == 0);
    REQUIRE(replay::writeUsageRollups(*ledger) > 0);
    // Someone with write access doubles hour 1's quota integral and
    // recomputes the checksum: the storage layer cannot tell.
    const std::string key = format::usageRollupKey('h', start + hour);
    std::string raw;
    REQUIRE(ledger->getRaw(format::kUsageRollupsFamily, key, &raw).isOk());
    auto words = tamper::wordsOf(std::string_view(raw).substr(format::kChunkHeaderSize));
    replay::UsageBucket bucket = replay::UsageBucket::fromRollup(words);
    REQUIRE(bucket.quota.size() == 1);
    bucket.quota.begin()->second += bucket.quota.begin()->second;
    const std::string payload = bucket.toRollup();
    REQUIRE(ledger
                ->putRawForTesting(
                    format::kUsageRollupsFamily, key,
                    format::encodeU64(XXH3_64bits(payload.data(), payload.size())) + payload)
                .isOk());
  }
  const std::string ledgerFlag = " --ledger " + dir.path("l");
  const std::string period = " --from 2026-11-01T00:00:00Z --to 2026-11-01T03:00:00Z -o csv";
  // The report trusts the edited bucket, as it trusts projections; verify
  // is what catches both.
  CHECK(runCommand(query + " report" + ledgerFlag + period)
            .output.find(",cpu,0.000000000,0.000000,"
                         "144000.000000000,") != std::string::npos);
  CHECK(runCommand(query + " report" + ledgerFlag + period + " --no-checkpoints")
            .output.find(",cpu,0.000000000,0.000000,108000.000000000,") != std::string::npos);
  const CommandRun verify = runCommand(replayBinary + ledgerFlag + " verify -o table");
  INFO(verify.output);
  CHECK(verify.exitCode == 3);
  CHECK(verify.output.find("FAILED at the usage rollup of the hour 2026-11-01T01:00:00Z: differs "
                           "from a fresh integration of the log") != std::string::npos);
  REQUIRE(runCommand(replayBinary + ledgerFlag + " checkpoint --rewrite").exitCode == 0);
  const CommandRun again = runCommand(replayBinary + ledgerFlag + " verify -o table");
  INFO(again.output);
  CHECK(again.exitCode == 0);
  CHECK(again.output.find("usage rollups against a fresh integration") != std::string::npos);
}

// The proof line (docs/reference.md): every answer states the newest
// verification; an edit that verify then finds makes every answer refuse
// (exit 3, naming the seq) until a verification passes again, or answer
// with a loud warning when asked to.
TEST_CASE("answers state the newest verification and refuse while it failed",
          "[crash][verify][proof]") {
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  const std::string query = programFromEnv("LEDGER_QUERY");
  TempDir dir;
  std::uint64_t cq = 0, last = 0;
  {
    auto ledger = openLedger(dir.path("l"));
    cq = tamper::smallLedger(*ledger);
    last = ledger->lastSeq();
  }
  const std::string flag = " --ledger " + dir.path("l");
  const std::string state = query + " state" + flag + " --seq " + std::to_string(last);
  {
    const CommandRun never = runCommand(state + " -o json");
    INFO(never.output);
    CHECK(never.exitCode == 0);
    CHECK(never.output.find("\"verifyOk\": null") != std::string::npos);
  }
  REQUIRE(runCommand(replay + flag + " verify").exitCode == 0);
  {
    const CommandRun json = runCommand(state + " -o json");
    INFO(json.output);
    CHECK(json.exitCode == 0);
    CHECK(json.output.find("\"verifiedUpTo\": " + std::to_string(last) + ",") != std::string::npos);
    CHECK(json.output.find("\"verifyOk\": true") != std::string::npos);
    CHECK(json.output.find("\"verifiedBy\": \"ledger-replay verify\"") != std::string::npos);
    const CommandRun table = runCommand(query + " usage" + flag + " --at now -o table");
    INFO(table.output);
    CHECK(table.exitCode == 0);
    CHECK(table.output.find("verified up to seq " + std::to_string(last) + " at ") !=
          std::string::npos);
    CHECK(table.output.find("by ledger-replay verify: ok\n") != std::string::npos);
  }
  {
    auto ledger = openLedger(dir.path("l"));
    tamper::projection(*ledger, cq);
  }
  REQUIRE(runCommand(replay + flag + " verify").exitCode == 3);
  const std::string atCq = "FAILED at seq " + std::to_string(cq);
  for (const std::string& command :
       {state + " -o json", query + " usage" + flag + " --at now -o table",
        query + " report" + flag + " --from 2026-11-01T00:00:00Z --to 2026-11-02T00:00:00Z -o csv",
        replay + flag + " -o json"}) {
    const CommandRun refused = runCommand(command);
    INFO(command << "\n" << refused.output);
    CHECK(refused.exitCode == 3);
    CHECK(refused.output.find(atCq) != std::string::npos);
    CHECK(refused.output.find("rebuild-projection") != std::string::npos);
    CHECK(refused.output.find("--ignore-failed-verify") != std::string::npos);
    CHECK(refused.output.find("\"clusterQueues\"") == std::string::npos);
  }
  {
    const CommandRun anyway = runCommand(state + " -o json --ignore-failed-verify");
    INFO(anyway.output);
    CHECK(anyway.exitCode == 0);
    CHECK(anyway.output.find("WARNING: answers may rest on edited data: checked up to seq") !=
          std::string::npos);
    CHECK(anyway.output.find("\"verifyOk\": false") != std::string::npos);
    CHECK(anyway.output.find("\"verifyFailedSeq\": " + std::to_string(cq)) != std::string::npos);
  }
  // The rebuild mends the projection; answers wait for a verification that
  // says so.
  REQUIRE(runCommand(replay + flag + " rebuild-projection").exitCode == 0);
  CHECK(runCommand(state + " -o json").exitCode == 3);
  REQUIRE(runCommand(replay + flag + " verify").exitCode == 0);
  const CommandRun restored = runCommand(state + " -o json");
  INFO(restored.output);
  CHECK(restored.exitCode == 0);
  CHECK(restored.output.find("\"verifyOk\": true") != std::string::npos);
  CHECK(restored.output.find("WARNING") == std::string::npos);
}

namespace archive_cli_test {

// A sealed archive (ledger/archive.h) of the first half of a small ledger's
// records at dir/archive; returns its directory.
std::string sealedArchive(const TempDir& dir, std::uint64_t* lastSeq) {
  auto source = openLedger(dir.path("live"));
  tamper::smallLedger(*source);
  *lastSeq = source->lastSeq() / 2;
  ArchiveOptions o;
  o.derive = tamper::ingestDerivations();
  ArchiveSeal seal;
  const Status st = writeArchive(*source, *lastSeq, dir.path("archive"), o, &seal);
  INFO(st.toString());
  REQUIRE(st.isOk());
  return dir.path("archive");
}

}  // namespace archive_cli_test

TEST_CASE("ledger-replay verify checks an archive alone and names a damaged seal", "[cli]") {
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  std::uint64_t lastSeq = 0;
  const std::string archive = archive_cli_test::sealedArchive(dir, &lastSeq);
  const std::string verify = replay + " --ledger " + archive + " verify --output json";
  {
    const CommandRun sound = runCommand(verify);
    INFO(sound.output);
    CHECK(sound.exitCode == 0);
    CHECK(sound.output.find("\"recordsChecked\": " + std::to_string(lastSeq)) != std::string::npos);
  }
  SECTION("a damaged seal") {
    std::ofstream(archive + "/" + kArchiveSealFile, std::ios::binary | std::ios::trunc)
        << std::string(64, 'x');
    const CommandRun damaged = runCommand(verify);
    INFO(damaged.output);
    CHECK(damaged.exitCode == 3);
    CHECK(damaged.output.find("archive seal " + archive + "/" + kArchiveSealFile + " is damaged") !=
          std::string::npos);
  }
  SECTION("records appended after the seal") {
    {
      auto appended = openLedger(archive);
      ingestText(*appended, event("ADDED", resourceFlavor("late")));
    }
    const CommandRun grown = runCommand(verify);
    INFO(grown.output);
    CHECK(grown.exitCode == 3);
    CHECK(grown.output.find("its seal says seq " + std::to_string(lastSeq)) != std::string::npos);
  }
}
