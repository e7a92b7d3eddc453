// `ledger-replay archive --before TIME --to DIR` (tools/archive/archive_command.h),
// the real programs: the cut ledger answers every moment from the cut on and
// every whole hour before it byte for byte as the uncut ledger does, refuses
// an earlier moment or a partial hour naming the archive (exit 1), extends
// the same archive on a later archive (another directory refused), and a
// kill -9 before or after the cut's batch leaves the old or the new ledger.
//
// Runs the real ledger-ingest, ledger-replay and ledger-query binaries (paths
// in $LEDGER_INGEST, $LEDGER_REPLAY, $LEDGER_QUERY).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ledger/archive.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace archive_cut_cli_test {

// The demo stream with its events 15 minutes apart from 08:00 UTC, so that
// it spans eleven hours: whole hours before and after a cut at 13:00.
std::string spreadDemo(const TempDir& dir) {
  std::istringstream in(demoStream());
  const std::string path = dir.path("events.jsonl");
  std::ofstream out(path);
  int i = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    Json e = Json::parse(line);
    char time[32];
    std::snprintf(time, sizeof time, "2026-11-20T%02d:%02d:00Z", 8 + i / 4, (i % 4) * 15);
    e["time"] = time;
    out << e.dump() << "\n";
    ++i;
  }
  return path;
}

// SIGKILL: the shell that ran it says 128 + 9.
bool killedBySignal(const CommandRun& r) { return r.exitCode == 137 || r.exitCode == -1; }

// The JSON document in a program's output, after any log lines on stderr.
Json jsonIn(const std::string& output) {
  const std::size_t start = output.starts_with('{') ? 0 : output.find("\n{") + 1;
  return Json::parse(output.substr(start));
}

struct Ledgers {
  TempDir dir;
  std::string replay = programFromEnv("LEDGER_REPLAY");
  std::string query = programFromEnv("LEDGER_QUERY");
  std::string live = dir.path("live");
  std::string twin = dir.path("twin");  // the same records, never cut
  std::string archive = dir.path("archive");

  Ledgers() {
    const std::string ingest = programFromEnv("LEDGER_INGEST");
    const std::string events = spreadDemo(dir);
    for (const std::string& l : {live, twin}) {
      const CommandRun r = runCommand(ingest + " --ledger " + l + " --from " + events);
      INFO(r.output);
      REQUIRE(r.exitCode == 0);
    }
  }
  CommandRun archiveBefore(const std::string& time, const std::string& env = "") const {
    return runCommand(env + replay + " --ledger " + live + " archive --before " + time + " --to " +
                      archive);
  }
  CommandRun ask(const std::string& ledger, const std::string& question) const {
    return runCommand(query + " --ledger " + ledger + " " + question + " -o json");
  }
  // The question answered alike by the live ledger and its uncut twin.
  void sameAnswer(const std::string& question) const {
    const CommandRun cut = ask(live, question);
    const CommandRun whole = ask(twin, question);
    INFO(question << "\ncut: " << cut.output << "\nuncut: " << whole.output);
    CHECK(cut.exitCode == 0);
    CHECK(whole.exitCode == 0);
    CHECK(cut.output == whole.output);
  }
  // A moment before the cut: the cut ledger with --archive answers as the
  // uncut twin (ledger-query and ledger-replay's state report).
  void sameWithArchive(const std::string& question) const {
    const CommandRun cut = ask(live, question + " --archive " + archive);
    const CommandRun whole = ask(twin, question);
    INFO(question << "\ncut: " << cut.output << "\nuncut: " << whole.output);
    CHECK(cut.exitCode == 0);
    CHECK(cut.output == whole.output);
  }
  CommandRun verify(const std::string& flags) const {
    return runCommand(replay + " --ledger " + live + " verify " + flags);
  }
  void refused(const std::string& question) const {
    const CommandRun r = ask(live, question);
    INFO(question << "\n" << r.output);
    CHECK(r.exitCode == 1);
    CHECK(r.output.find("archive " + std::filesystem::absolute(archive).string()) !=
          std::string::npos);
    CHECK(r.output.find("--archive") != std::string::npos);
  }
};

constexpr const char* kCut = "2026-11-20T13:00:00Z";
// From the last archived record's time (12:45) on, the state is the cut's.
const char* const kAfter[] = {"2026-11-20T12:45:00Z", "2026-11-20T13:00:00Z",
                              "2026-11-20T15:07:00Z", "2026-11-20T18:30:00Z"};

}  // namespace archive_cut_cli_test

using namespace archive_cut_cli_test;

TEST_CASE("ledger-replay archive: the cut ledger answers after the cut and whole hours before",
          "[cli][archive]") {
  Ledgers l;
  const CommandRun archived = l.archiveBefore(kCut);
  INFO(archived.output);
  REQUIRE(archived.exitCode == 0);
  CHECK(archived.output.find("archived records 1..20 ") != std::string::npos);

  for (const char* at : kAfter) l.sameAnswer(std::string("state --at ") + at);
  l.sameAnswer("usage --at 2026-11-20T14:00:00Z");
  l.sameAnswer("report --from 2026-11-20T08:00:00Z --to 2026-11-20T12:00:00Z");
  l.sameAnswer("report --from 2026-11-20T09:00:00Z --to 2026-11-20T17:00:00Z --by namespace");

  l.refused("state --at 2026-11-20T12:44:59Z");
  l.refused("report --from 2026-11-20T09:30:00Z --to 2026-11-20T12:00:00Z");

  l.sameWithArchive("state --at 2026-11-20T10:00:00Z");
  l.sameWithArchive("state --seq 7");
  l.sameWithArchive("usage --at 2026-11-20T10:00:00Z");
  {
    const std::string until = " --until 2026-11-20T11:00:00Z -o json";
    const CommandRun cut =
        runCommand(l.replay + " --ledger " + l.live + " --archive " + l.archive + until);
    const CommandRun whole = runCommand(l.replay + " --ledger " + l.twin + until);
    INFO(cut.output << "\n" << whole.output);
    CHECK(cut.exitCode == 0);
    CHECK(cut.output == whole.output);
  }

  // The archive verifies alone and ends where its seal says.
  const CommandRun verify = runCommand(l.replay + " --ledger " + l.archive + " verify");
  INFO(verify.output);
  CHECK(verify.exitCode == 0);
}

TEST_CASE("ledger-replay archive again extends the same archive and moves the cut on",
          "[cli][archive]") {
  Ledgers l;
  REQUIRE(l.archiveBefore(kCut).exitCode == 0);
  const std::string archive = std::filesystem::absolute(l.archive).string();
  {
    const std::string other = l.dir.path("other");
    const CommandRun r = runCommand(l.replay + " --ledger " + l.live +
                                    " archive --before 2026-11-20T15:00:00Z --to " + other);
    INFO(r.output);
    CHECK(r.exitCode == 1);
    CHECK(r.output.find("into the archive " + archive) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(other));
  }
  for (const char* before : {"2026-11-20T12:00:00Z", kCut}) {
    const CommandRun r = l.archiveBefore(before);
    INFO(r.output);
    CHECK(r.exitCode == 0);
    CHECK(r.output.find("nothing to archive: records 1..20 ") != std::string::npos);
  }
  auto extendedAnswers = [&] {
    l.refused("state --at 2026-11-20T14:00:00Z");
    l.sameWithArchive("state --at 2026-11-20T10:00:00Z");
    l.sameWithArchive("state --at 2026-11-20T14:00:00Z");
    l.sameAnswer("state --at 2026-11-20T15:07:00Z");
    l.sameAnswer("report --from 2026-11-20T09:00:00Z --to 2026-11-20T17:00:00Z");
    const CommandRun both = l.verify("--archive " + l.archive + " -o table");
    INFO(both.output);
    CHECK(both.exitCode == 0);
    CHECK(both.output.find("live ledger's link at seq 28") != std::string::npos);
  };
  SECTION("a later --before: records 21..28 added, sealed again, the cut moved on") {
    const CommandRun r = l.archiveBefore("2026-11-20T15:00:00Z");
    INFO(r.output);
    CHECK(r.exitCode == 0);
    CHECK(r.output.find("archived records 1..28 ") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(l.archive + ".extending"));
    extendedAnswers();
    const CommandRun alone = runCommand(l.replay + " --ledger " + l.archive + " verify");
    INFO(alone.output);
    CHECK(alone.exitCode == 0);
  }
  SECTION("killed after the extended archive, before the cut: the old cut, both verify") {
    const CommandRun killed =
        l.archiveBefore("2026-11-20T15:00:00Z", "LEDGER_TEST_KILL_ARCHIVE=after-archive ");
    INFO(killed.output);
    CHECK(killedBySignal(killed));
    std::optional<ArchiveSeal> seal;
    REQUIRE(readArchiveSeal(l.archive, &seal).isOk());
    REQUIRE(seal.has_value());
    CHECK(seal->lastSeq == 28);
    l.sameAnswer("state --at 2026-11-20T14:00:00Z");
    l.sameWithArchive("state --at 2026-11-20T10:00:00Z");
    {
      // Verified as copies: a verification is recorded beside the ledger
      // and every later answer states it, which the uncut twin's would not.
      const std::string live = l.dir.path("copy-live"), archive = l.dir.path("copy-archive");
      std::filesystem::copy(l.live, live, std::filesystem::copy_options::recursive);
      std::filesystem::copy(l.archive, archive, std::filesystem::copy_options::recursive);
      const CommandRun both =
          runCommand(l.replay + " --ledger " + live + " verify -o table --archive " + archive);
      INFO(both.output);
      CHECK(both.exitCode == 0);
      CHECK(both.output.find("live ledger's link at seq 20") != std::string::npos);
    }
    const CommandRun rerun = l.archiveBefore("2026-11-20T15:00:00Z");
    INFO(rerun.output);
    CHECK(rerun.exitCode == 0);
    CHECK(rerun.output.find("holds the sealed archive of records 1..28") != std::string::npos);
    extendedAnswers();
  }
  SECTION("killed after the second cut: the new state") {
    const CommandRun killed =
        l.archiveBefore("2026-11-20T15:00:00Z", "LEDGER_TEST_KILL_ARCHIVE=after-cut ");
    INFO(killed.output);
    CHECK(killedBySignal(killed));
    extendedAnswers();
  }
}

TEST_CASE("ledger-replay archive refuses a cut that would leave no hour or no record",
          "[cli][archive]") {
  Ledgers l;
  for (const char* before : {"2026-11-20T08:00:00Z", "2026-11-20T18:50:00Z"}) {
    const CommandRun r = l.archiveBefore(before);
    INFO(r.output);
    CHECK(r.exitCode == 1);
    CHECK(r.output.find("--before " + std::string(before)) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(l.archive));
}

TEST_CASE("a kill -9 during ledger-replay archive leaves the old ledger or the new",
          "[cli][archive]") {
  Ledgers l;
  SECTION("killed after the archive, before the cut: the old ledger; a rerun makes the cut") {
    const CommandRun killed = l.archiveBefore(kCut, "LEDGER_TEST_KILL_ARCHIVE=after-archive ");
    INFO(killed.output);
    CHECK(killedBySignal(killed));
    std::optional<ArchiveSeal> seal;
    REQUIRE(readArchiveSeal(l.archive, &seal).isOk());
    CHECK(seal.has_value());
    l.sameAnswer("state --at 2026-11-20T10:00:00Z");

    const CommandRun rerun = l.archiveBefore(kCut);
    INFO(rerun.output);
    CHECK(rerun.exitCode == 0);
    CHECK(rerun.output.find("holds the sealed archive of records 1..20") != std::string::npos);
    l.refused("state --at 2026-11-20T10:00:00Z");
    l.sameAnswer("state --at 2026-11-20T15:07:00Z");
  }
  SECTION("killed after the cut: the new ledger; a rerun has nothing to archive") {
    const CommandRun killed = l.archiveBefore(kCut, "LEDGER_TEST_KILL_ARCHIVE=after-cut ");
    INFO(killed.output);
    CHECK(killedBySignal(killed));
    l.refused("state --at 2026-11-20T10:00:00Z");
    for (const char* at : kAfter) l.sameAnswer(std::string("state --at ") + at);
    const CommandRun rerun = l.archiveBefore(kCut);
    INFO(rerun.output);
    CHECK(rerun.exitCode == 0);
    CHECK(rerun.output.find("nothing to archive") != std::string::npos);
  }
}

TEST_CASE("ledger-replay verify of a cut ledger, alone and with --archive as one chain",
          "[cli][archive]") {
  Ledgers l;
  REQUIRE(l.archiveBefore(kCut).exitCode == 0);
  {
    const CommandRun alone = l.verify("");
    INFO(alone.output);
    CHECK(alone.exitCode == 0);
    CHECK(alone.output.find("dense sequence from the link to the archive") != std::string::npos);
  }
  SECTION("sound: both ledgers and the link") {
    const CommandRun both = l.verify("--archive " + l.archive + " -o table");
    INFO(both.output);
    CHECK(both.exitCode == 0);
    CHECK(both.output.find("link: the archive's seal is the live ledger's link at seq 20") !=
          std::string::npos);
    const CommandRun json = l.verify("--archive " + l.archive + " -o json");
    INFO(json.output);
    CHECK(json.exitCode == 0);
    CHECK(jsonIn(json.output)["link"]["ok"] == true);
  }
  SECTION("a damaged record in the archive is named") {
    {
      auto archive = openLedger(l.archive);
      cutLastWordOfProjection(*archive, 5);
    }
    const CommandRun both = l.verify("--archive " + l.archive + " -o json");
    INFO(both.output);
    CHECK(both.exitCode == 3);
    const Json j = jsonIn(both.output);
    CHECK(j["ok"] == false);
    CHECK(j["archive"]["firstBadSeq"] == 5);
    CHECK(j["live"]["ok"] == true);
  }
  SECTION("an archive that is not the cut's is named at the link") {
    std::filesystem::remove(l.archive + "/" + kArchiveSealFile);
    const CommandRun both = l.verify("--archive " + l.archive + " -o table");
    INFO(both.output);
    CHECK(both.exitCode == 3);
    CHECK(both.output.find("link: FAILED: " + l.archive + " holds no seal") != std::string::npos);
    const CommandRun answer =
        l.ask(l.live, "state --at 2026-11-20T10:00:00Z --archive " + l.archive);
    INFO(answer.output);
    CHECK(answer.exitCode == 3);
  }
}
