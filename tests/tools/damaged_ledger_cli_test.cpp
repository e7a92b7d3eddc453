// The programs on a damaged ledger (tests/replay/damaged_ledger_test.cpp for
// the library): a stored projection that folds but does not decode deeper
// down ends `ledger-replay` with exit 3 and a message, not an abort, and
// `ledger-replay verify` names the record; an edit of any derived family
// that keeps RocksDB's checksums valid fails `verify` with exit 3.
//
// Runs the real ledger-replay binary (path in $LEDGER_REPLAY).
#include <sys/wait.h>

#include <array>
#include <cstdio>

#include <filesystem>
#include <functional>

#include "kueue_objects.h"
#include "tamper_support.h"
#include "test_support.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

struct Run {
  int exitCode = -1;   // -1: ended by a signal
  std::string output;  // stdout and stderr
};

Run run(const std::string& command) {
  Run r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    r.output.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  return r;
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

  const Run report = run(binary + ledgerFlag + " --no-checkpoints -o json");
  INFO(report.output);
  CHECK(report.exitCode == 3);
  CHECK(report.output.find("does not decode") != std::string::npos);

  const Run verify = run(binary + ledgerFlag + " verify");
  INFO(verify.output);
  CHECK(verify.exitCode == 3);
  CHECK(verify.output.find("projection does not decode") != std::string::npos);
  CHECK(verify.output.find("\"firstBadSeq\": " + std::to_string(victim)) != std::string::npos);
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
    const Run sound = run(verifyCommand);
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
    const Run verify = run(binary + " --ledger " + copy + " verify -o json");
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
