// The state report's filters (tools/report_filter.h): --cluster-queue,
// --namespace, --findings-only.
#include "tools/report_filter.h"
#include "tests/test_support.h"
#include "tools/program.h"

using namespace ledger;

namespace report_filter_test {

// Two queues, three workloads in two namespaces, one pool with an allocation
// to each of two workloads, a finding on a workload, a queue and a claim.
replay::StateReport teamReport() {
  replay::StateReport r;
  r.digest = "d";
  for (const char* q : {"team-a", "team-b"}) {
    replay::ClusterQueueReport cq;
    cq.name = q;
    r.clusterQueues.push_back(cq);
    replay::HeldRow held;
    held.clusterQueue = q;
    held.flavor = "gpu";
    held.resource = "nvidia.com/gpu";
    r.held.push_back(held);
  }
  auto wl = [](const char* ns, const char* name, const char* cq) {
    replay::WorkloadReport w;
    w.ns = ns;
    w.name = name;
    w.clusterQueue = cq;
    return w;
  };
  r.workloads = {wl("ml", "train", "team-a"), wl("ml", "eval", "team-b"),
                 wl("web", "batch", "team-b")};
  replay::PoolReport pool;
  pool.driver = "gpu.example.com";
  pool.pool = "node-1";
  pool.counters.emplace_back();
  auto allocation = [](const char* device, const char* claim, const char* cq) {
    replay::AllocationReport a;
    a.device = device;
    a.claim = claim;
    a.clusterQueue = cq;
    return a;
  };
  pool.allocations.push_back(allocation("gpu-0", "ml/train-claim", "team-a"));
  pool.allocations.push_back(allocation("gpu-1", "web/batch-claim", "team-b"));
  r.pools.push_back(pool);
  r.findings = {{.type = "ChargeMismatch", .object = "Workload ml/train", .message = "m"},
                {.type = "OverNominal", .object = "ClusterQueue team-b", .message = "m"},
                {.type = "Orphan", .object = "ResourceClaim web/x", .message = "m"}};
  return r;
}

cli::ReportFilter filterOf(std::optional<std::string> cq, std::optional<std::string> ns,
                           bool findingsOnly = false) {
  cli::ReportFilter f;
  f.clusterQueue = std::move(cq);
  f.ns = std::move(ns);
  f.findingsOnly = findingsOnly;
  return f;
}

std::vector<std::string> objects(const replay::StateReport& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) out.push_back(f.object);
  return out;
}

TEST_CASE("state --cluster-queue keeps the queue, its workloads, allocations and findings",
          "[cli][filter]") {
  auto r = teamReport();
  cli::filterReport(r, filterOf("team-a", std::nullopt));
  REQUIRE(r.clusterQueues.size() == 1);
  CHECK(r.clusterQueues[0].name == "team-a");
  REQUIRE(r.workloads.size() == 1);
  CHECK(r.workloads[0].name == "train");
  REQUIRE(r.held.size() == 1);
  REQUIRE(r.pools.size() == 1);
  REQUIRE(r.pools[0].allocations.size() == 1);
  CHECK(r.pools[0].allocations[0].device == "gpu-0");
  CHECK(r.pools[0].counters.size() == 1);  // the pool's, not the queue's
  CHECK(objects(r) == std::vector<std::string>{"Workload ml/train"});
  CHECK(r.digest == "d");
}

TEST_CASE("state --cluster-queue with a name the state lacks is bad usage", "[cli][filter]") {
  auto r = teamReport();
  CHECK_THROWS_AS(cli::filterReport(r, filterOf("no-such-queue", std::nullopt)), cli::UsageError);
  CHECK_THROWS_WITH(cli::filterReport(r, filterOf("no-such-queue", std::nullopt)),
                    "no ClusterQueue 'no-such-queue' at that moment");
}

TEST_CASE("state --namespace keeps its workloads, the queues they use, its claims and findings",
          "[cli][filter]") {
  auto r = teamReport();
  cli::filterReport(r, filterOf(std::nullopt, "web"));
  REQUIRE(r.workloads.size() == 1);
  CHECK(r.workloads[0].name == "batch");
  REQUIRE(r.clusterQueues.size() == 1);
  CHECK(r.clusterQueues[0].name == "team-b");
  REQUIRE(r.pools.size() == 1);
  REQUIRE(r.pools[0].allocations.size() == 1);
  CHECK(r.pools[0].allocations[0].claim == "web/batch-claim");
  CHECK(objects(r) == std::vector<std::string>{"ClusterQueue team-b", "ResourceClaim web/x"});

  auto none = teamReport();
  cli::filterReport(none, filterOf(std::nullopt, "nobody"));
  CHECK(none.workloads.empty());
  CHECK(none.clusterQueues.empty());
  CHECK(none.pools.empty());
  CHECK(none.findings.empty());
}

TEST_CASE("state --findings-only leaves the findings alone", "[cli][filter]") {
  auto r = teamReport();
  cli::filterReport(r, filterOf(std::nullopt, std::nullopt, true));
  CHECK(r.clusterQueues.empty());
  CHECK(r.workloads.empty());
  CHECK(r.pools.empty());
  CHECK(r.held.empty());
  CHECK(r.findings.size() == 3);

  auto team = teamReport();
  cli::filterReport(team, filterOf("team-b", std::nullopt, true));
  CHECK(objects(team) == std::vector<std::string>{"ClusterQueue team-b"});
  CHECK(team.workloads.empty());
}

}  // namespace report_filter_test
