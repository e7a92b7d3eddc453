// Reports grouped by flavor and by joined keys (--by cluster-queue,flavor),
// checked by hand on two queues and two flavors; the same rows from usage
// rollups as from the log; the totals; and the command's forms: CSV unit
// columns, the table's total row, JSON's named keys and totals, and the
// line a period past the last record prints.
#include <sstream>

#include "replay/kueue/usage_report.h"
#include "replay/kueue/usage_rollups.h"
#include "schema/k8s/rfc3339.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tools/query_commands.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

std::int64_t periodTime(const std::string& t) { return *tryParseRfc3339(t); }

// cq: spot 4 GPUs and on-demand 2 GPUs nominal; cq2: spot 2 GPUs. From
// 10:00 ns-a holds 2 spot GPUs in cq and ns-b 1 on-demand GPU in cq; from
// 11:00 ns-a holds 1 spot GPU in cq2. A flavor made at 14:00 is the last
// record, so the hours from 10:00 to 14:00 can be stored as rollups.
std::string twoFlavors() {
  Json spec = {{"containers", Json::array({container("c", {{"nvidia.com/gpu", "1"}})})}};
  auto wl = [&](const std::string& ns, const std::string& name, const std::string& lq) {
    return workload(ns, name, lq, Json::array({podSet("main", 1, spec)}));
  };
  const std::string t = "2026-11-01T09:00:00Z";
  return event("ADDED", resourceFlavor("spot"), t) +
         event("ADDED", resourceFlavor("on-demand"), t) +
         event("ADDED",
               clusterQueue(
                   "cq", "v1beta2", "",
                   {{"spot", {{"nvidia.com/gpu", 4}}}, {"on-demand", {{"nvidia.com/gpu", 2}}}}),
               t) +
         event("ADDED", clusterQueue("cq2", "v1beta2", "", {{"spot", {{"nvidia.com/gpu", 2}}}}),
               t) +
         event("ADDED", localQueue("ns-a", "lq", "cq"), t) +
         event("ADDED", localQueue("ns-a", "lq2", "cq2"), t) +
         event("ADDED", localQueue("ns-b", "lq", "cq"), t) +
         event("ADDED", admitted(wl("ns-a", "w1", "lq"), "cq", "spot", {{"nvidia.com/gpu", "2"}}),
               "2026-11-01T10:00:00Z") +
         event("ADDED",
               admitted(wl("ns-b", "w2", "lq"), "cq", "on-demand", {{"nvidia.com/gpu", "1"}}),
               "2026-11-01T10:00:00Z") +
         event("ADDED", admitted(wl("ns-a", "w3", "lq2"), "cq2", "spot", {{"nvidia.com/gpu", "1"}}),
               "2026-11-01T11:00:00Z") +
         event("ADDED", resourceFlavor("later"), "2026-11-01T14:00:00Z");
}

// "group|resource|reserved seconds|quota seconds or -" per row, then the totals.
std::vector<std::string> rowsOf(const replay::UsagePeriod& p) {
  std::vector<std::string> out;
  auto line = [](const replay::UsageRow& r) {
    return r.group + "|" + r.resource + "|" + r.reserved.seconds() + "|" +
           (r.quota ? r.quota->seconds() : "-");
  };
  for (const auto& r : p.rows) out.push_back(line(r));
  for (const auto& r : p.totals) out.push_back("total:" + line(r));
  return out;
}

struct TwoFlavorLedger {
  TempDir dir;
  std::unique_ptr<Ledger> ledger = openLedger(dir.path("l"));
  TwoFlavorLedger() { REQUIRE(ingestText(*ledger, twoFlavors()).rejected == 0); }
  replay::UsagePeriod period(const std::string& by, replay::UsageSource source) {
    return replay::computeUsagePeriod(*ledger, periodTime("2026-11-01T10:00:00Z"),
                                      periodTime("2026-11-01T12:00:00Z"), replay::parseGrouping(by),
                                      std::nullopt, {}, replay::ChartSteps::kOmit, source);
  }
  std::string run(const std::string& by, cli::OutputFormat output,
                  const std::string& to = "2026-11-01T12:00:00Z") {
    cli::QueryArgs args;
    args.from = periodTime("2026-11-01T10:00:00Z");
    args.to = periodTime(to);
    args.by = by;
    args.output = output;
    std::ostringstream out;
    REQUIRE(cli::runQuery(*ledger, "report", args, out) == cli::kExitOk);
    return out.str();
  }
};

}  // namespace

TEST_CASE("report by flavor and by joined keys: hand-computed integrals and totals",
          "[report][grouping]") {
  TwoFlavorLedger f;
  const auto log = replay::UsageSource::kLog;
  // spot: 2 GPUs x 2 h in cq + 1 GPU x 1 h in cq2 = 18000 GPU-s; on-demand 1 x 2 h.
  CHECK(rowsOf(f.period("flavor", log)) ==
        std::vector<std::string>{"on-demand|nvidia.com/gpu|7200.000000000|-",
                                 "spot|nvidia.com/gpu|18000.000000000|-",
                                 "total:|nvidia.com/gpu|25200.000000000|-"});
  // Quota per (ClusterQueue, flavor): 2 x 2 h, 4 x 2 h and 2 x 2 h.
  CHECK(rowsOf(f.period("cluster-queue,flavor", log)) ==
        std::vector<std::string>{"cq,on-demand|nvidia.com/gpu|7200.000000000|14400.000000000",
                                 "cq,spot|nvidia.com/gpu|14400.000000000|28800.000000000",
                                 "cq2,spot|nvidia.com/gpu|3600.000000000|14400.000000000",
                                 "total:|nvidia.com/gpu|25200.000000000|57600.000000000"});
  // The order given is the order of the values.
  CHECK(f.period("flavor,cluster-queue", log).rows.front().group == "on-demand,cq");
  CHECK(rowsOf(f.period("namespace,flavor", log)) ==
        std::vector<std::string>{"ns-a,spot|nvidia.com/gpu|18000.000000000|-",
                                 "ns-b,on-demand|nvidia.com/gpu|7200.000000000|-",
                                 "total:|nvidia.com/gpu|25200.000000000|-"});
  CHECK(rowsOf(f.period("workload,flavor", log)) ==
        std::vector<std::string>{"ns-a/w1,spot|nvidia.com/gpu|14400.000000000|-",
                                 "ns-a/w3,spot|nvidia.com/gpu|3600.000000000|-",
                                 "ns-b/w2,on-demand|nvidia.com/gpu|7200.000000000|-",
                                 "total:|nvidia.com/gpu|25200.000000000|-"});
  const auto byQueue = f.period("cluster-queue", log);
  REQUIRE(byQueue.rows.size() == 2);
  CHECK(byQueue.rows[0].groupValues == std::vector<std::string>{"cq"});
  CHECK(byQueue.rows[0].quota->seconds() == "43200.000000000");  // both flavors
}

TEST_CASE("report groupings without workload are served from rollups with the log's digits",
          "[report][grouping][rollups]") {
  TwoFlavorLedger f;
  REQUIRE(replay::writeUsageRollups(*f.ledger) > 0);
  for (const char* by :
       {"flavor", "cluster-queue,flavor", "namespace,flavor", "flavor,namespace,cluster-queue"}) {
    INFO(by);
    const auto stored = f.period(by, replay::UsageSource::kRollupsWhereStored);
    const auto log = f.period(by, replay::UsageSource::kLog);
    CHECK(stored.rollupBucketsRead > 0);
    CHECK(stored.rollupProblem.empty());
    CHECK(rowsOf(stored) == rowsOf(log));
  }
  // By workload the log is read: rollups keep namespaces.
  CHECK(f.period("workload,flavor", replay::UsageSource::kRollupsWhereStored).rollupBucketsRead ==
        0);
}

TEST_CASE("--by: words, joined keys and what does not go together", "[report][grouping]") {
  CHECK(replay::parseGrouping("cluster-queue").text() == "cluster-queue");
  CHECK(replay::parseGrouping("namespace,flavor").dimensions ==
        std::vector<replay::GroupBy>{replay::GroupBy::kNamespace, replay::GroupBy::kFlavor});
  CHECK(replay::parseGrouping("cluster-queue,flavor").carriesQuota());
  CHECK_FALSE(replay::parseGrouping("flavor").carriesQuota());
  CHECK_FALSE(replay::parseGrouping("cluster-queue,namespace").carriesQuota());
  CHECK_THROWS_WITH(replay::parseGrouping("local-queue"),
                    Catch::Contains("'local-queue' is not one of cluster-queue, namespace"));
  CHECK_THROWS_WITH(replay::parseGrouping("flavor,flavor"), Catch::Contains("given twice"));
  CHECK_THROWS_WITH(replay::parseGrouping("namespace,workload"),
                    Catch::Contains("do not go together"));
  CHECK_THROWS_AS(replay::parseGrouping(""), std::invalid_argument);
  CHECK_THROWS_AS(replay::parseGrouping("flavor,"), std::invalid_argument);
  TwoFlavorLedger f;
  cli::QueryArgs args;
  args.from = periodTime("2026-11-01T10:00:00Z");
  args.to = periodTime("2026-11-01T12:00:00Z");
  args.by = "cluster-queue,nope";
  std::ostringstream out;
  CHECK_THROWS_WITH(cli::runQuery(*f.ledger, "report", args, out),
                    Catch::StartsWith("--by 'cluster-queue,nope': 'nope' is not one of"));
}

TEST_CASE("report output: key columns, CSV units, a total row, JSON totals", "[report][grouping]") {
  TwoFlavorLedger f;
  SECTION("CSV: a column per key, hours in the table's unit, the total last") {
    CHECK(f.run("cluster-queue,flavor", cli::OutputFormat::kCsv) ==
          "cluster_queue,flavor,resource,reserved_resource_seconds,reserved_resource_hours,"
          "quota_resource_seconds,utilisation,unit,reserved,quota,held_resource_seconds,"
          "uncharged_resource_seconds,held,uncharged\n"
          "cq,on-demand,nvidia.com/gpu,7200.000000000,2.000000,14400.000000000,50.00%,h,2.000000,"
          "4.000000,,,,\n"
          "cq,spot,nvidia.com/gpu,14400.000000000,4.000000,28800.000000000,50.00%,h,4.000000,"
          "8.000000,,,,\n"
          "cq2,spot,nvidia.com/gpu,3600.000000000,1.000000,14400.000000000,25.00%,h,1.000000,"
          "4.000000,,,,\n"
          "total,,nvidia.com/gpu,25200.000000000,7.000000,57600.000000000,43.75%,h,7.000000,"
          "16.000000,,,,\n");
    CHECK(f.run("flavor", cli::OutputFormat::kCsv) ==
          "group,resource,reserved_resource_seconds,reserved_resource_hours,"
          "quota_resource_seconds,utilisation,unit,reserved,quota,held_resource_seconds,"
          "uncharged_resource_seconds,held,uncharged\n"
          "on-demand,nvidia.com/gpu,7200.000000000,2.000000,,,h,2.000000,,,,,\n"
          "spot,nvidia.com/gpu,18000.000000000,5.000000,,,h,5.000000,,,,,\n"
          "total,nvidia.com/gpu,25200.000000000,7.000000,,,h,7.000000,,,,,\n");
  }
  SECTION("table: a header per key and a TOTAL row") {
    const std::string table = f.run("namespace,flavor", cli::OutputFormat::kTable);
    CHECK_THAT(
        table,
        Catch::Contains(
            "\nNAMESPACE   FLAVOR      RESOURCE         RESERVED     QUOTA   "
            "UTILISATION   HELD   UNCHARGED\n"
            "ns-a        spot        nvidia.com/gpu   5.000000 h   -       -             -      -\n"
            "ns-b        on-demand   nvidia.com/gpu   2.000000 h   -       -             -      -\n"
            "TOTAL                   nvidia.com/gpu   7.000000 h   -       -             -      "
            "-\n"));
    CHECK_THAT(table, !Catch::Contains("note:"));
  }
  SECTION("JSON: the keys under their names, group for one key, totals") {
    auto j = nlohmann::json::parse(f.run("cluster-queue,flavor", cli::OutputFormat::kJson));
    CHECK(j["by"] == "cluster-queue,flavor");
    CHECK(j["lastRecordAt"] == "2026-11-01T14:00:00Z");
    CHECK_FALSE(j.contains("afterLastRecord"));
    CHECK(j["rows"][1]["clusterQueue"] == "cq");
    CHECK(j["rows"][1]["flavor"] == "spot");
    CHECK_FALSE(j["rows"][1].contains("group"));
    REQUIRE(j["totals"].size() == 1);
    CHECK(j["totals"][0]["resource"] == "nvidia.com/gpu");
    CHECK(j["totals"][0]["reservedResourceHours"] == "7.000000");
    CHECK(j["totals"][0]["utilisation"] == "43.75%");
    j = nlohmann::json::parse(f.run("flavor", cli::OutputFormat::kJson));
    CHECK(j["rows"][0]["group"] == "on-demand");
    CHECK(j["rows"][0]["flavor"] == "on-demand");
  }
}

TEST_CASE("a period past the ledger's last record says so in one line", "[report][time]") {
  TwoFlavorLedger f;
  const std::string to = "2026-11-21T16:30:05Z";  // 20d 2h 30m 5s after 14:00
  const std::string line =
      "the ledger's last record is at 2026-11-01T14:00:00Z; the period runs 20d 2h 30m 5s past it";
  const std::string table = f.run("cluster-queue", cli::OutputFormat::kTable, to);
  CHECK_THAT(table, Catch::Contains("\nnote: " + line + "\n"));
  const auto j = nlohmann::json::parse(f.run("cluster-queue", cli::OutputFormat::kJson, to));
  CHECK(j["lastRecordAt"] == "2026-11-01T14:00:00Z");
  CHECK(j["afterLastRecord"] == line);
  // The arithmetic is the period as given: the levels run on to its end.
  CHECK(j["rows"][0]["reservedResourceSeconds"] != "");
}
