// The report's numbers as Prometheus metrics: exact decimals of quantities,
// escaped labels, every watched finding type present at 0, findings counted
// under the ClusterQueue they concern.
#include "tools/render/report_metrics.h"

#include <catch2/catch.hpp>
#include <string>

using namespace ledger;
using namespace ledger::replay;

namespace {

bool has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("quantities are exact decimals in the resource's units", "[render][metrics]") {
  using render::exactDecimal;
  CHECK(exactDecimal(Quantity::parse("0")) == "0");
  CHECK(exactDecimal(Quantity::parse("1500m")) == "1.5");
  CHECK(exactDecimal(Quantity::parse("1Gi")) == "1073741824");
  CHECK(exactDecimal(Quantity::parse("-1n")) == "-0.000000001");
  CHECK(exactDecimal(Quantity::parse("123456789012345678901234567")) ==
        "123456789012345678901234567");
}

TEST_CASE("quota rows, findings by ClusterQueue, pools", "[render][metrics]") {
  StateReport r;
  r.seq = 7;
  ClusterQueueReport cq;
  cq.name = "team-a";
  QuotaRow row;
  row.flavor = "default";
  row.resource = "cpu";
  row.nominal = Quantity::parse("4");
  row.reserved = Quantity::parse("4500m");
  row.admitted = Quantity::parse("1500m");
  row.admittedUnrepresentable = true;
  cq.quotas.push_back(row);
  r.clusterQueues.push_back(cq);
  WorkloadReport w;
  w.ns = "ns";
  w.name = "w1";
  w.clusterQueue = "team-a";
  r.workloads.push_back(w);
  r.findings.push_back({"QuotaExceeded", "ClusterQueue team-a", "m"});
  r.findings.push_back({"UnchargedDRA", "Workload ns/w1", "m"});
  r.findings.push_back({"UnchargedDRA", "Workload ns/w1", "m2"});
  r.findings.push_back({"DeviceDoubleAllocated", "ResourceSlice device d/p/x", "m"});
  r.findings.push_back({"MalformedQuantity", "Workload ns/gone", "m"});
  PoolReport p;
  p.driver = "gpu.example.com";
  p.pool = "node-1";
  p.devices = 8;
  p.counters.push_back({"set", "memory", Quantity::parse("80Gi"), Quantity::parse("40Gi"), false});
  r.pools.push_back(p);

  const std::string text = render::reportToMetrics(r);
  const std::string labels = "{cluster_queue=\"team-a\",flavor=\"default\",resource=\"cpu\"}";
  CHECK(has(text, "ledger_cluster_queue_reserved" + labels + " 4.5"));
  CHECK(has(text, "ledger_cluster_queue_admitted" + labels + " NaN"));
  CHECK(has(text, "ledger_cluster_queue_nominal_quota" + labels + " 4"));
  CHECK(has(text, "ledger_open_findings{type=\"QuotaExceeded\",cluster_queue=\"team-a\"} 1"));
  CHECK(has(text, "ledger_open_findings{type=\"UnchargedDRA\",cluster_queue=\"team-a\"} 2"));
  CHECK(has(text, "ledger_open_findings{type=\"DeviceDoubleAllocated\",cluster_queue=\"\"} 1"));
  CHECK(has(text, "ledger_open_findings{type=\"MalformedQuantity\",cluster_queue=\"\"} 1"));
  CHECK(has(text, "ledger_open_findings{type=\"ChargeDrift\",cluster_queue=\"team-a\"} 0"));
  CHECK(has(text, "ledger_open_findings{type=\"ChargeDrift\",cluster_queue=\"\"} 0"));
  CHECK(has(text, "ledger_pool_devices{driver=\"gpu.example.com\",pool=\"node-1\"} 8"));
  CHECK(has(text,
            "ledger_pool_consumed{driver=\"gpu.example.com\",pool=\"node-1\",counter_set="
            "\"set\",counter=\"memory\"} 42949672960"));
  CHECK(has(text,
            "ledger_pool_capacity{driver=\"gpu.example.com\",pool=\"node-1\",counter_set="
            "\"set\",counter=\"memory\"} 85899345920"));
  CHECK(has(text, "ledger_state_seq 7"));
  CHECK(text.find("# TYPE ledger_open_findings gauge\n") != std::string::npos);
  CHECK(text.find("w1") == std::string::npos);  // no per-workload label
}

TEST_CASE("held and uncharged per ClusterQueue, flavor and resource", "[render][metrics][held]") {
  StateReport r;
  HeldRow gpu;
  gpu.clusterQueue = "team-b";
  gpu.flavor = "-";
  gpu.resource = "nvidia.com/gpu";
  gpu.held = Quantity::parse("1");
  gpu.uncharged = Quantity::parse("1");
  r.held.push_back(gpu);
  HeldRow memory;
  memory.clusterQueue = "-";
  memory.flavor = "-";
  memory.resource = "gpu.memory";
  memory.held = Quantity::parse("5Gi");
  memory.unchargedUnrepresentable = true;
  r.held.push_back(memory);
  const std::string text = render::reportToMetrics(r);
  CHECK(has(text, "# TYPE ledger_cluster_queue_held gauge"));
  CHECK(has(text,
            "ledger_cluster_queue_held{cluster_queue=\"team-b\",flavor=\"-\",resource=\"nvidia.com/"
            "gpu\"} 1"));
  CHECK(has(text,
            "ledger_cluster_queue_uncharged{cluster_queue=\"team-b\",flavor=\"-\",resource="
            "\"nvidia.com/gpu\"} 1"));
  CHECK(has(text,
            "ledger_cluster_queue_held{cluster_queue=\"-\",flavor=\"-\",resource=\"gpu.memory\"} "
            "5368709120"));
  CHECK(has(text,
            "ledger_cluster_queue_uncharged{cluster_queue=\"-\",flavor=\"-\",resource=\"gpu."
            "memory\"} NaN"));
}
