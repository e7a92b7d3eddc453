// A writer killed with SIGKILL at random points never leaves half a batch,
// a gap or a duplicate: after 50 kills the ledger reopens and verifies, and
// ingesting the same input again holds each event exactly once. A writer
// that fills its disk exits 4, never aborts, and leaves a ledger that
// verifies and resumes.
//
// Runs the real ledger-ingest and ledger-replay binaries (paths in
// $LEDGER_INGEST, $LEDGER_REPLAY).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ledger/verify.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

pid_t spawnIngest(const std::string& binary, const std::string& ledgerDir, const std::string& input,
                  const std::string& batch) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    execl(binary.c_str(), binary.c_str(), "--ledger", ledgerDir.c_str(), "--from", input.c_str(),
          "--batch", batch.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int waitFor(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// Kills `ledger-ingest --batch BATCH` 50 times (20 under a sanitizer, where
// each run's start costs many times more) at random points on 4000 events
// with PAYLOAD bytes of data each, checking the ledger after every tenth
// kill, then lets it finish and checks every event is there once.
void killAndRecover(const std::string& batch, std::size_t payload) {
  const std::string binary = programFromEnv("LEDGER_INGEST");
  TempDir dir;
  const std::string input = dir.path("events.jsonl");
  constexpr int kEvents = 4000;
  {
    std::ofstream out(input);
    for (int i = 0; i < kEvents; ++i) {
      Json obj = {{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", meta("team-" + std::to_string(i % 7), "cm-" + std::to_string(i / 3),
                                    "uid-" + std::to_string(i / 3), std::to_string(1000 + i))},
                  {"data", {{"payload", std::string(payload, static_cast<char>('a' + i % 26))}}}};
      out << event(i % 3 == 0 ? "ADDED" : "MODIFIED", obj,
                   "2026-11-01T00:" + std::to_string(10 + i / 600) + ":00Z");
    }
  }
  const std::string ledgerDir = dir.path("ledger");
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int> delayMs(5, 120);
  int kills = 0;
  const int rounds = kSanitizerBuild ? 20 : 50;
  for (int round = 0; round < rounds; ++round) {
    pid_t pid = spawnIngest(binary, ledgerDir, input, batch);
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs(rng)));
    if (kill(pid, SIGKILL) == 0) ++kills;
    waitFor(pid);
    // After every kill the ledger must reopen and verify.
    if (round % 10 == 9) {
      auto ledger = openLedger(ledgerDir);
      VerifyReport v;
      REQUIRE(verifyLog(*ledger, &v).isOk());
      INFO("round " << round << ": " << v.problem);
      REQUIRE(v.ok());
    }
  }
  CHECK(kills >= rounds * 9 / 10);  // a few runs may finish before the signal arrives
  {
    auto ledger = openLedger(ledgerDir);
    VerifyReport v;
    REQUIRE(verifyLog(*ledger, &v).isOk());
    REQUIRE(v.ok());
    CHECK(ledger->lastSeq() <= static_cast<std::uint64_t>(kEvents));
  }
  const int status = waitFor(spawnIngest(binary, ledgerDir, input, batch));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  auto ledger = openLedger(ledgerDir);
  VerifyReport v;
  REQUIRE(verifyLog(*ledger, &v).isOk());
  REQUIRE(v.ok());
  CHECK(ledger->lastSeq() == static_cast<std::uint64_t>(kEvents));
  std::set<std::string> seen;
  REQUIRE(ledger
              ->scanRecords(1, 0,
                            [&](const Record& r, const Digest&) {
                              seen.insert(r.identity.uid + "@" + r.identity.resourceVersion);
                              return true;
                            })
              .isOk());
  CHECK(seen.size() == static_cast<std::size_t>(kEvents));
}

}  // namespace

TEST_CASE("SIGKILL at random points leaves a sound ledger; re-ingest completes it exactly once",
          "[crash]") {
  killAndRecover("16", 600);
}

TEST_CASE("SIGKILL during commits written as table files leaves a sound ledger too", "[crash]") {
  // 1000 records of ~5 KB: each commit is past Ledger's kTableCommitBytes,
  // so its log records go in as a table file before the batch that moves
  // the head (ledger/internal/log_table.h); a kill between the two leaves records
  // past the head, which the next open must drop.
  killAndRecover("1000", 5000);
}

namespace {

int exitCodeOf(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status); }

int runQuiet(const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return exitCodeOf(waitFor(pid));
}

}  // namespace

TEST_CASE(
    "a full disk ends ledger-ingest with exit 4, never an abort; the ledger verifies and "
    "resumes",
    "[crash][disk-full]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  const std::string input = dir.path("events.jsonl");
  constexpr int kEvents = 3000;
  {
    std::ofstream out(input);
    // Payloads that do not compress, nor repeat one another (the log stores
    // a record as a delta against the one before): the disk fills.
    std::mt19937 random(7);
    std::uniform_int_distribution<int> letter('a', 'z');
    for (int i = 0; i < kEvents; ++i) {
      const std::string n = "cm-" + std::to_string(i);
      std::string payload(1500, ' ');
      for (char& c : payload) c = static_cast<char>(letter(random));
      Json obj = {{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", meta("team", n, "uid-" + n, std::to_string(1000 + i))},
                  {"data", {{"payload", payload}}}};
      out << event("ADDED", obj, "2026-11-01T00:00:00Z");
    }
  }
  SmallDisk disk(dir.path("small"), 2 << 20);
  if (!disk.mounted()) {
    WARN("skipped: cannot mount a tmpfs here (needs root, CAP_SYS_ADMIN)");
    return;
  }
  const std::string full = dir.path("small/ledger");
  // The default batch, and a small one (many commits through the write-ahead log).
  for (const std::string batch : {"1000", "50"}) {
    std::filesystem::remove_all(full);
    // What was committed is said on stdout, as after any run.
    const CommandRun run =
        runCommand(ingest + " --ledger " + full + " -o json --from " + input + " --batch " + batch);
    INFO("--batch " << batch << "\n" << run.output);
    REQUIRE(run.exitCode == 4);
    CHECK(run.output.find("\"storageFailed\":true") != std::string::npos);
    CHECK(run.output.find("\"lastSeq\":") != std::string::npos);
    // On a larger disk the ledger verifies, and the same input completes it.
    const std::string moved = dir.path("moved-" + batch);
    std::filesystem::copy(full, moved, std::filesystem::copy_options::recursive);
    CHECK(runQuiet({replay, "--ledger", moved, "verify"}) == 0);
    CHECK(runQuiet({ingest, "--ledger", moved, "--from", input, "--batch", batch}) == 0);
    auto ledger = openLedger(moved);
    CHECK(ledger->lastSeq() == static_cast<std::uint64_t>(kEvents));
    VerifyReport v;
    REQUIRE(verifyLog(*ledger, &v).isOk());
    CHECK(v.ok());
  }
}
