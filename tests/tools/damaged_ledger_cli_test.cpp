// The programs on a damaged ledger (tests/replay/damaged_ledger_test.cpp for
// the library): a stored projection that folds but does not decode deeper
// down ends `ledger-replay` with exit 3 and a message, not an abort, and
// `ledger-replay verify` names the record.
//
// Runs the real ledger-replay binary (path in $LEDGER_REPLAY).
#include <sys/wait.h>

#include <array>
#include <cstdio>

#include "kueue_objects.h"
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
