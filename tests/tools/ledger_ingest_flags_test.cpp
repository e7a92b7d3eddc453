// The ledger-ingest and ledger-replay programs on bad arguments (flags; the
// input itself is tests/tools/ledger_ingest_test.cpp): a directory
// given as --from, negative numbers for unsigned flags.
//
// Runs the real binaries (paths in $LEDGER_INGEST, $LEDGER_REPLAY).
#include <filesystem>

#include "test_support.h"

using namespace ledger;
using namespace ledger::testing;

// A directory opens as a stream that reads nothing: it used to "succeed"
// with 0 values and exit 0.
TEST_CASE("ledger-ingest --from DIR is rejected input naming the path (exit 2)", "[cli]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  TempDir dir;
  std::filesystem::create_directories(dir.path("inputs"));
  const CommandRun r =
      runCommand(ingest + " --ledger " + dir.path("l") + " -o json --from " + dir.path("inputs"));
  INFO(r.output);
  CHECK(r.exitCode == 2);
  CHECK(r.output.find(dir.path("inputs") + ": cannot read: is a directory") != std::string::npos);
  CHECK(r.output.find("\"rejected\":1") != std::string::npos);
}

// Boost.Program_options reads "-1" into an unsigned flag as 2^64-1.
TEST_CASE("negative numbers for unsigned flags are bad usage (exit 1)", "[cli]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  const CommandRun batch =
      runCommand(ingest + " --ledger " + dir.path("l") + " --batch=-1 --from -");
  INFO(batch.output);
  CHECK(batch.exitCode == 1);
  CHECK(batch.output.find("--batch must be a non-negative integer, not '-1'") != std::string::npos);
  const CommandRun fromSeq =
      runCommand(replay + " export --ledger " + dir.path("l") + " --from-seq -1");
  INFO(fromSeq.output);
  CHECK(fromSeq.exitCode == 1);
  CHECK(fromSeq.output.find("--from-seq must be a non-negative integer") != std::string::npos);
}
