// The state report's table (tools/render/report_format.h): the pools table
// one line per pool by default, every counter with `wide`.
#include <algorithm>

#include "tests/test_support.h"
#include "tools/render/report_format.h"

using namespace ledger;

namespace report_format_test {

replay::PoolReport poolWithCounters() {
  replay::PoolReport p;
  p.driver = "gpu.example.com";
  p.pool = "node-1";
  p.devices = 8;
  for (int i = 0; i < 3; ++i) {
    replay::CounterReport c;
    c.counterSet = "gpu-" + std::to_string(i);
    c.counter = "memory";
    c.capacity = Quantity::parse("80Gi");
    c.consumed = Quantity::parse(i == 0 ? "80Gi" : "10Gi");
    p.counters.push_back(c);
  }
  return p;
}

std::size_t lineCount(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST_CASE("the pools table: one short line per pool, every counter with --wide",
          "[render][table]") {
  const std::vector<replay::PoolReport> pools = {poolWithCounters()};
  const std::string narrow = render::poolsToTable(pools);
  INFO(narrow);
  CHECK(lineCount(narrow) == 2);
  CHECK_THAT(narrow, Catch::Contains("COUNTERS   USED-UP"));
  CHECK_THAT(narrow, !Catch::Contains("gpu-1/memory"));
  CHECK_THAT(narrow, Catch::EndsWith("3          1\n"));

  const std::string wide = render::poolsToTable(pools, {.wide = true, .findingsOnly = false});
  INFO(wide);
  CHECK(lineCount(wide) == 2);
  CHECK_THAT(wide, Catch::Contains("COUNTERS (consumed/capacity)"));
  CHECK_THAT(wide, Catch::Contains(
                       "gpu-0/memory=80Gi/80Gi gpu-1/memory=10Gi/80Gi gpu-2/memory=10Gi/80Gi"));
}

TEST_CASE("state --findings-only -o table: the moment and the findings alone", "[render][table]") {
  replay::StateReport report;
  report.seq = 0;
  report.pools = {poolWithCounters()};
  report.findings = {{"UnchargedDRA", "Workload a/b", "holds a device"}};
  const std::string all = render::reportToTable(report);
  CHECK_THAT(all, Catch::Contains("CLUSTERQUEUE") && Catch::Contains("DRIVER"));
  const std::string only = render::reportToTable(report, {.wide = false, .findingsOnly = true});
  INFO(only);
  CHECK_THAT(only, !Catch::Contains("CLUSTERQUEUE") && !Catch::Contains("DRIVER"));
  CHECK_THAT(only, Catch::Contains("UnchargedDRA   Workload a/b   holds a device"));
}

}  // namespace report_format_test
