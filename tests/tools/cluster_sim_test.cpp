// The benchmark's simulated cluster (tools/generator): deterministic per
// seed, shaped like the API server's watch stream, and consistent enough
// with Kueue's rules that the ledger ingests all of it and audits it clean.
#include <set>

#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"
#include "tools/generator/cluster_sim.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

std::string simulate(std::uint64_t seed, std::uint64_t events, int nodes = 4, int queues = 4) {
  return simulatedStream(seed, events, nodes, queues);
}

}  // namespace

TEST_CASE("the same seed gives the same bytes, another seed other bytes", "[generator]") {
  const std::string a = simulate(7, 1500);
  CHECK(a == simulate(7, 1500));
  CHECK(a != simulate(8, 1500));
  CHECK(std::count(a.begin(), a.end(), '\n') == 1500);
  // A longer run continues the same stream.
  CHECK(simulate(7, 2000).compare(0, a.size(), a) == 0);
}

TEST_CASE("every line is a timed watch event of a realistic object", "[generator]") {
  const std::string text = simulate(1, 3000);
  std::istringstream in(text);
  std::string line;
  std::set<std::string> kinds;
  std::string lastTime;
  std::size_t large = 0, withManagedFields = 0, lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    const Json e = Json::parse(line);
    const std::string type = e.at("type");
    CHECK((type == "ADDED" || type == "MODIFIED" || type == "DELETED"));
    const std::string time = e.at("time");
    CHECK(time >= lastTime);  // same format throughout, so text order is time order
    lastTime = time;
    const Json& object = e.at("object");
    kinds.insert(object.at("kind").get<std::string>());
    CHECK(!object.at("metadata").at("uid").get<std::string>().empty());
    if (object["metadata"].contains("managedFields")) ++withManagedFields;
    if (line.size() > 10 * 1024) ++large;
  }
  CHECK(lines == 3000);
  CHECK(large == 0);
  CHECK(withManagedFields == lines);
  for (const char* kind :
       {"Kueue", "DeviceClass", "ResourceFlavor", "ResourceSlice", "Namespace", "ClusterQueue",
        "LocalQueue", "ResourceClaimTemplate", "Workload", "Pod", "ResourceClaim"}) {
    INFO(kind);
    CHECK(kinds.count(kind) == 1);
  }
}

TEST_CASE("the ledger ingests the stream whole and its audit finds nothing", "[generator]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  const IngestOutcome out = ingestText(*ledger, simulate(3, 3000));
  CHECK(out.rejected == 0);
  CHECK(out.stats.recorded == 3000);
  CHECK(out.stats.duplicates == 0);
  const replay::StateReport report = reportOf(*ledger);
  CHECK(!report.workloads.empty());
  CHECK(report.pools.size() == 4);
  std::string findings;
  for (const auto& f : report.findings)
    findings += f.type + " " + f.object + ": " + f.message + "\n";
  INFO(findings);
  CHECK(report.findings.empty());
}

TEST_CASE("tiny clusters run and bad options are refused", "[generator]") {
  const std::string tiny = simulate(5, 800, 1, 1);
  CHECK(std::count(tiny.begin(), tiny.end(), '\n') == 800);
  gen::SimOptions bad;
  bad.nodes = 0;
  CHECK_THROWS_AS(gen::ClusterSim(bad), std::invalid_argument);
}
