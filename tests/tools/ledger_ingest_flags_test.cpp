// The ledger-ingest and ledger-replay programs on bad arguments (flags; the
// input itself is tests/tools/ledger_ingest_test.cpp): a directory
// given as --from, negative numbers for unsigned flags.
//
// Runs the real binaries (paths in $LEDGER_INGEST, $LEDGER_REPLAY).
#include <filesystem>
#include <fstream>

#include "tests/test_support.h"

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

// Quantities are exact to about 1.7e29 units: two workloads of 1e29 CPUs
// each reserve more than that. The report names it as a finding and leaves
// the sum out; it is produced in full otherwise, with exit 0 as for any
// finding - never a wrapped number, an abort, or no report at all.
TEST_CASE("a sum of quantities past the ledger's range is a finding, not a wrapped number",
          "[cli]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  std::string events = event("ADDED", {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                       {"kind", "ResourceFlavor"},
                                       {"metadata", meta("", "f", "uid-f", "1")},
                                       {"spec", Json::object()}});
  events += event(
      "ADDED",
      {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
       {"kind", "ClusterQueue"},
       {"metadata", meta("", "cq", "uid-cq", "1")},
       {"spec",
        {{"resourceGroups",
          Json::array({{{"coveredResources", {"cpu"}},
                        {"flavors", Json::array({{{"name", "f"},
                                                  {"resources", Json::array({{{"name", "cpu"},
                                                                              {"nominalQuota",
                                                                               "1"}}})}}})}}})}}}});
  for (const char* name : {"a", "b"}) {
    events +=
        event("ADDED",
              {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
               {"kind", "Workload"},
               {"metadata", meta("ns", name, std::string("uid-") + name, "1")},
               {"spec",
                {{"queueName", "q"},
                 {"podSets",
                  Json::array({{{"name", "main"}, {"count", 1}, {"template", Json::object()}}})}}},
               {"status",
                {{"conditions", Json::array({{{"type", "QuotaReserved"}, {"status", "True"}}})},
                 {"admission",
                  {{"clusterQueue", "cq"},
                   {"podSetAssignments",
                    Json::array(
                        {{{"name", "main"},
                          {"count", 1},
                          {"flavors", {{"cpu", "f"}}},
                          {"resourceUsage", {{"cpu", "100000000000000000000000000000"}}}}})}}}}}});
  }
  {
    std::ofstream out(dir.path("events.jsonl"));
    out << events;
  }
  const CommandRun in =
      runCommand(ingest + " --ledger " + dir.path("l") + " --from " + dir.path("events.jsonl"));
  INFO(in.output);
  REQUIRE(in.exitCode == 0);
  const CommandRun r = runCommand(replay + " --ledger " + dir.path("l") + " -o json");
  INFO(r.output);
  CHECK(r.exitCode == 0);
  CHECK(r.output.find(R"("reserved": null)") != std::string::npos);
  CHECK(r.output.find(R"("type": "QuantityOverflow")") != std::string::npos);
  CHECK(r.output.find(R"("object": "ClusterQueue cq")") != std::string::npos);
  CHECK(r.output.find("reserved f/cpu (its workloads' usage added up) is past the exact range "
                      "of quantities (about +-1.7e29 units) in the state at seq 4") !=
        std::string::npos);
}

// A batch of no records and a moment past the ledger's end are bad usage,
// as serve's 400 for seq:N past the end: they used to exit 0 (the batch
// after creating the ledger's directory, the moment clamped to the end).
TEST_CASE("--batch 0 and state --seq past the end are bad usage (exit 1)", "[cli]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string query = programFromEnv("LEDGER_QUERY");
  TempDir dir;
  const CommandRun zero = runCommand(ingest + " --ledger " + dir.path("l") + " --batch 0 --from -");
  INFO(zero.output);
  CHECK(zero.exitCode == 1);
  CHECK(zero.output.find("--batch must be at least 1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path("l")));

  const std::string events = dir.path("events.jsonl");
  std::ofstream(events)
      << R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap",)"
      << R"("metadata":{"namespace":"a","name":"b","uid":"u","resourceVersion":"1"}}})"
      << "\n";
  REQUIRE(runCommand(ingest + " --ledger " + dir.path("l") + " --from " + events).exitCode == 0);
  const std::string state = query + " state --ledger " + dir.path("l") + " -o json --seq ";
  CHECK(runCommand(state + "1").exitCode == 0);
  const CommandRun past = runCommand(state + "2");
  INFO(past.output);
  CHECK(past.exitCode == 1);
  CHECK(past.output.find("--seq 2 is past the ledger's end (seq 1)") != std::string::npos);
}

// A flag a command does not read used to be ignored: `state --cluster-queue
// x` printed the whole state, `state --by` and `--step` went unnoticed.
TEST_CASE("a flag the command does not read is bad usage (exit 1) naming its flags", "[cli]") {
  const std::string ingest = programFromEnv("LEDGER_INGEST");
  const std::string query = programFromEnv("LEDGER_QUERY");
  const std::string replay = programFromEnv("LEDGER_REPLAY");
  TempDir dir;
  const std::string events = dir.path("events.jsonl");
  std::ofstream(events)
      << R"({"type":"ADDED","object":{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor",)"
      << R"("metadata":{"name":"f","uid":"u","resourceVersion":"1"},"spec":{}}})"
      << "\n";
  REQUIRE(runCommand(ingest + " --ledger " + dir.path("l") + " --from " + events).exitCode == 0);
  const std::string ledgerFlag = " --ledger " + dir.path("l");
  for (const std::string& args : {query + " state --by flavor", query + " state --step 5m",
                                  query + " workload a/b --at now"}) {
    const CommandRun r = runCommand(args + ledgerFlag);
    INFO(args << "\n" << r.output);
    CHECK(r.exitCode == 1);
    CHECK(r.output.find("is not a flag of '") != std::string::npos);
    CHECK(r.output.find("it reads ") != std::string::npos);
  }
  const CommandRun by = runCommand(query + " state --by flavor" + ledgerFlag);
  CHECK(by.output.find("--by is not a flag of 'state': it reads --at, --seq, --cluster-queue, "
                       "--namespace, --findings-only, --wide") != std::string::npos);
  const CommandRun every = runCommand(replay + " checkpoint --until now" + ledgerFlag);
  INFO(every.output);
  CHECK(every.exitCode == 1);
  CHECK(every.output.find("--until is not a flag of 'checkpoint': it reads --every, --rewrite") !=
        std::string::npos);
  const CommandRun missing =
      runCommand(query + " state --at now -o json --cluster-queue no-such-queue" + ledgerFlag);
  INFO(missing.output);
  CHECK(missing.exitCode == 1);
  CHECK(missing.output.find("no ClusterQueue 'no-such-queue' at that moment") != std::string::npos);
  CHECK(runCommand(replay + " -o json --findings-only" + ledgerFlag).exitCode == 0);
}
