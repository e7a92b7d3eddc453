// Usage over a period (ledger-query report): integrals checked by hand on a
// small timeline, grouping, CSV/JSON through the command, and the SVG chart
// parsed back with an XML parser.
#include <boost/multiprecision/cpp_int.hpp>
#include <fstream>
#include <pugixml.hpp>

#include "replay/kueue/usage_report.h"
#include "replay/kueue/workload_history.h"
#include "schema/k8s/rfc3339.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tools/query_commands.h"
#include "tools/render/usage_chart.h"

using namespace ledger;
using namespace ledger::testing;
using namespace ledger::testing::k8s;

namespace {

std::int64_t at(const std::string& t) { return *tryParseRfc3339(t); }

// cq (4 GPUs nominal) in namespace ns: w1 admitted 10:00 (2 GPUs), evicted
// (quota released) 10:30, re-admitted 11:00, finished 12:00. w2 (ns2 via
// lq2) holds 1 GPU from 10:15 to the end of the period (13:00).
std::string timeline() {
  Json spec = {{"containers", Json::array({container("c", {{"nvidia.com/gpu", "2"}})})}};
  Json w1 = workload("ns", "w1", "lq", Json::array({podSet("main", 1, spec)}));
  Json reserved = admitted(w1, "cq", "default", {{"nvidia.com/gpu", "2"}});
  Json evicted = reserved;
  evicted["status"]["conditions"] = Json::array(
      {{{"type", "QuotaReserved"}, {"status", "False"}, {"reason", "Pending"}, {"message", ""}},
       {{"type", "Evicted"},
        {"status", "True"},
        {"reason", "Preempted"},
        {"message", "preempted"}}});
  evicted["status"].erase("admission");
  Json w2 = workload("ns2", "w2", "lq2", Json::array({podSet("main", 1, spec)}));
  auto rv = [](Json o, const std::string& v) {
    o["metadata"]["resourceVersion"] = v;
    return o;
  };
  return event("ADDED", resourceFlavor("default"), "2026-11-01T09:00:00Z") +
         event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"nvidia.com/gpu", 4}}}}),
               "2026-11-01T09:00:00Z") +
         event("ADDED", localQueue("ns", "lq", "cq"), "2026-11-01T09:00:00Z") +
         event("ADDED", localQueue("ns2", "lq2", "cq"), "2026-11-01T09:00:00Z") +
         event("ADDED", w1, "2026-11-01T09:30:00Z") +
         event("MODIFIED", rv(reserved, "2"), "2026-11-01T10:00:00Z") +
         event("ADDED", admitted(w2, "cq", "default", {{"nvidia.com/gpu", "1"}}),
               "2026-11-01T10:15:00Z") +
         event("MODIFIED", rv(evicted, "3"), "2026-11-01T10:30:00Z") +
         event("MODIFIED", rv(reserved, "4"), "2026-11-01T11:00:00Z") +
         event("MODIFIED", rv(finished(reserved), "5"), "2026-11-01T12:00:00Z");
}

const replay::UsageRow* rowOf(const replay::UsagePeriod& p, const std::string& group,
                              const std::string& resource) {
  for (const auto& r : p.rows) {
    if (r.group == group && r.resource == resource) return &r;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("report: integrals of reserved quota match a hand computation", "[report]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, timeline());
  auto p =
      replay::computeUsagePeriod(*ledger, at("2026-11-01T09:00:00Z"), at("2026-11-01T13:00:00Z"),
                                 replay::GroupBy::kClusterQueue, std::nullopt);
  const auto* r = rowOf(p, "cq", "nvidia.com/gpu");
  REQUIRE(r != nullptr);
  // w1: 2 GPUs x (30 min + 60 min) = 10800 GPU-s; w2: 1 x 165 min = 9900 GPU-s.
  CHECK(r->reserved.seconds() == "20700.000000000");
  CHECK(r->reserved.hours() == "5.750000");
  REQUIRE(r->quota);
  CHECK(r->quota->seconds() == "57600.000000000");  // 4 GPUs x 4 h

  SECTION("by namespace and by workload") {
    auto byNs =
        replay::computeUsagePeriod(*ledger, at("2026-11-01T09:00:00Z"), at("2026-11-01T13:00:00Z"),
                                   replay::GroupBy::kNamespace, std::nullopt);
    CHECK(rowOf(byNs, "ns", "nvidia.com/gpu")->reserved.seconds() == "10800.000000000");
    CHECK(rowOf(byNs, "ns2", "nvidia.com/gpu")->reserved.seconds() == "9900.000000000");
    CHECK_FALSE(rowOf(byNs, "ns", "nvidia.com/gpu")->quota);
    auto byWl =
        replay::computeUsagePeriod(*ledger, at("2026-11-01T09:00:00Z"), at("2026-11-01T13:00:00Z"),
                                   replay::GroupBy::kWorkload, std::nullopt);
    CHECK(rowOf(byWl, "ns/w1", "nvidia.com/gpu")->reserved.hours() == "3.000000");
  }
  SECTION("a window inside the timeline starts from the state at --from") {
    auto mid = replay::computeUsagePeriod(*ledger, at("2026-11-01T10:20:00Z"),
                                          at("2026-11-01T11:30:00.5Z"),
                                          replay::GroupBy::kClusterQueue, std::nullopt);
    // w1: 2 x (10 min + 30.5 min... 30 min + 0.5 s) ; w2: 1 x (70 min + 0.5 s)
    // = 2 x (600 + 1800.5) + 4200.5 = 9001.5 GPU-s
    CHECK(rowOf(mid, "cq", "nvidia.com/gpu")->reserved.seconds() == "9001.500000000");
  }
}

TEST_CASE("report: the command prints CSV and JSON and writes an SVG with one series per resource",
          "[report]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, timeline());
  cli::QueryArgs args;
  args.from = at("2026-11-01T09:00:00Z");
  args.to = at("2026-11-01T13:00:00Z");
  args.output = cli::OutputFormat::kCsv;
  args.svg = dir.path("usage.svg");
  std::ostringstream csv;
  REQUIRE(cli::runQuery(*ledger, "report", args, csv) == cli::kExitOk);
  CHECK_THAT(csv.str(), Catch::StartsWith("group,resource,reserved_resource_seconds"));
  CHECK_THAT(csv.str(),
             Catch::Contains("cq,nvidia.com/gpu,20700.000000000,5.750000,57600.000000000,35.93%"));

  args.output = cli::OutputFormat::kJson;
  std::ostringstream json;
  REQUIRE(cli::runQuery(*ledger, "report", args, json) == cli::kExitOk);
  auto j = nlohmann::json::parse(json.str());
  CHECK(j["rows"][0]["reservedResourceHours"] == "5.750000");

  pugi::xml_document doc;
  auto parsed = doc.load_file(args.svg->c_str());
  INFO(parsed.description());
  REQUIRE(parsed);
  auto svg = doc.child("svg");
  REQUIRE(svg);
  int series = 0;
  for (auto line : svg.children("polyline")) {
    if (std::string(line.attribute("class").value()) != "series") continue;
    ++series;
    CHECK(std::string(line.attribute("data-cluster-queue").value()) == "cq");
    CHECK(std::string(line.attribute("data-resource").value()) == "nvidia.com/gpu");
    CHECK(std::string(line.attribute("points").value()).size() > 20);
  }
  CHECK(series == 1);
  CHECK(svg.child("title"));
}

// Quantities far beyond 64 bits integrated over long periods: every number the
// command prints is compared with the exact product computed here in
// arbitrary precision (cpp_int), independently of the report's arithmetic.
// 128Ti over 30 days used to print 2.0e19 quota-seconds instead of 3.6e20.
TEST_CASE("report: big quotas over long periods print exact CSV and JSON numbers", "[report]") {
  using boost::multiprecision::cpp_int;
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {
      {"containers", Json::array({container("c", {{"cpu", "1Ei"}, {"memory", "100Ti"}})})}};
  Json w = workload("ns", "w", "lq", Json::array({podSet("main", 1, spec)}));
  const std::string t0 = "2026-11-01T00:00:00Z";
  ingestText(
      *ledger,
      event("ADDED", resourceFlavor("default"), t0) +
          event("ADDED",
                clusterQueue("cq", "v1beta2", "",
                             {{"default", {{"cpu", "2Ei"}, {"memory", "128Ti"}}}}),
                t0) +
          event("ADDED", localQueue("ns", "lq", "cq"), t0) +
          event("ADDED", admitted(w, "cq", "default", {{"cpu", "1Ei"}, {"memory", "100Ti"}}), t0));
  const cpp_int ei = cpp_int(1) << 60, ti = cpp_int(1) << 40;
  auto exact = [](const cpp_int& units, const cpp_int& seconds) {
    return cpp_int(units * seconds).str() + ".000000000";
  };
  auto hours = [](const cpp_int& units, const cpp_int& seconds) {
    const cpp_int micro = units * seconds * 1000000 / 3600;  // exact: seconds are whole hours
    std::string f = cpp_int(micro % 1000000).str();
    return cpp_int(micro / 1000000).str() + "." + std::string(6 - f.size(), '0') + f;
  };
  struct Period {
    const char* to;
    cpp_int seconds;
  };
  // 30 days; and 200 years (73048 days: 48 leap days from 2028 to 2224, 2100 and
  // 2200 not leap years), where cpu-seconds reach 7e36 and nano-unit-seconds 7e45.
  for (const Period& period : {Period{"2026-12-01T00:00:00Z", cpp_int(30) * 86400},
                               Period{"2226-11-01T00:00:00Z", cpp_int(73048) * 86400}}) {
    DYNAMIC_SECTION(period.to) {
      cli::QueryArgs args;
      args.from = at(t0);
      args.to = at(period.to);
      args.output = cli::OutputFormat::kCsv;
      std::ostringstream csv;
      REQUIRE(cli::runQuery(*ledger, "report", args, csv) == cli::kExitOk);
      // Then the table's numbers: hours, and GiB-hours for memory.
      CHECK_THAT(csv.str(),
                 Catch::Contains("cq,cpu," + exact(ei, period.seconds) + "," +
                                 hours(ei, period.seconds) + "," + exact(2 * ei, period.seconds) +
                                 ",50.00%,h," + hours(ei, period.seconds) + "," +
                                 hours(2 * ei, period.seconds) + ",,,,\n"));
      CHECK_THAT(csv.str(), Catch::Contains("cq,memory," + exact(100 * ti, period.seconds) + "," +
                                            hours(100 * ti, period.seconds) + "," +
                                            exact(128 * ti, period.seconds) + ",78.12%,GiB-h," +
                                            hours(100 * 1024, period.seconds) + "," +
                                            hours(128 * 1024, period.seconds) + ",,,,\n"));
      CHECK_THAT(csv.str(), Catch::Contains("total,cpu," + exact(ei, period.seconds) + ","));
      args.output = cli::OutputFormat::kJson;
      std::ostringstream json;
      REQUIRE(cli::runQuery(*ledger, "report", args, json) == cli::kExitOk);
      const auto j = nlohmann::json::parse(json.str());
      REQUIRE(j["rows"].size() == 2);
      CHECK(j["rows"][1]["resource"] == "memory");
      CHECK(j["rows"][1]["quotaResourceSeconds"] == exact(128 * ti, period.seconds));
      CHECK(j["rows"][0]["reservedResourceSeconds"] == exact(ei, period.seconds));
      CHECK(j["rows"][0]["utilisation"] == "50.00%");
    }
  }
}

TEST_CASE("workload history: every change with time and seq, and the devices held", "[history]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, timeline());
  cli::QueryArgs args;
  args.target = "ns/w1";
  args.output = cli::OutputFormat::kJson;
  std::ostringstream out;
  REQUIRE(cli::runQuery(*ledger, "workload", args, out) == cli::kExitOk);
  auto j = nlohmann::json::parse(out.str());
  std::vector<std::string> events;
  for (const auto& c : j["changes"]) events.push_back(c["event"]);
  // Evicted, then back in the queue (QuotaReserved False), then admitted again.
  CHECK(events == std::vector<std::string>{"Created", "QuotaReserved", "Admitted", "Evicted",
                                           "Requeued", "QuotaReserved", "Admitted", "Finished"});
  CHECK(j["changes"][3]["time"] == "2026-11-01T10:30:00Z");
  CHECK(j["changes"][3]["detail"] == "Preempted: preempted");
  args.target = "ns/nope";
  CHECK_THROWS_AS(cli::runQuery(*ledger, "workload", args, out), cli::UsageError);
}

TEST_CASE("workload history lists the DRA devices the workload's pods held and when", "[history]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::ifstream in(LEDGER_SOURCE_DIR "/tools/demo/cluster-events.jsonl");
  ingestText(*ledger, std::string(std::istreambuf_iterator<char>(in), {}));
  std::uint64_t reported = 0, of = 0;
  auto h = replay::workloadHistory(*ledger, "team-a", "job-train-resnet-126ec", std::nullopt,
                                   std::nullopt, [&](std::uint64_t done, std::uint64_t total) {
                                     CHECK(done >= reported);
                                     reported = done;
                                     of = total;
                                   });
  REQUIRE(h.found);
  REQUIRE(h.indexed);
  // The read reports its end: every record the index names was looked at,
  // fewer than the log holds.
  CHECK(reported == of);
  CHECK(of < ledger->lastSeq());
  // The scan looks at every record up to the last.
  replay::workloadHistoryScan(*ledger, "team-a", "job-train-resnet-126ec", std::nullopt,
                              std::nullopt, [&](std::uint64_t done, std::uint64_t total) {
                                reported = done;
                                of = total;
                              });
  CHECK(reported == ledger->lastSeq());
  CHECK(of == ledger->lastSeq());
  std::vector<std::string> events;
  for (const auto& e : h.entries)
    events.push_back(e.event +
                     (e.event.rfind("Device", 0) == 0 ? " " + e.detail.substr(0, 27) : ""));
  CHECK(std::find(events.begin(), events.end(), "DeviceAllocated gpu.nvidia.com/node-1/gpu-0") !=
        events.end());
  CHECK(std::find(events.begin(), events.end(), "DeviceReleased gpu.nvidia.com/node-1/gpu-0") !=
        events.end());
}

// Kueue's cache holds totalRequestsFromAdmission: resourceUsage scaled down
// by status.reclaimablePods. The period integral and the workload's history
// follow the held usage; `recorded` stays what Kueue charged at admission.
TEST_CASE("report and history: totalRequestsFromAdmission after reclaimablePods",
          "[report][history][reclaim]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json spec = {{"containers", Json::array({container("c", {{"nvidia.com/gpu", "1"}})})}};
  Json w = admitted(workload("ns", "w", "lq", Json::array({podSet("main", 4, spec)})), "cq",
                    "default", {{"nvidia.com/gpu", "4"}});
  Json reclaimed = w;
  reclaimed["metadata"]["resourceVersion"] = "2";
  reclaimed["status"]["reclaimablePods"] = Json::array({{{"name", "main"}, {"count", 2}}});
  ingestText(
      *ledger,
      event("ADDED", resourceFlavor("default"), "2026-11-01T09:00:00Z") +
          event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"nvidia.com/gpu", 8}}}}),
                "2026-11-01T09:00:00Z") +
          event("ADDED", localQueue("ns", "lq", "cq"), "2026-11-01T09:00:00Z") +
          event("ADDED", w, "2026-11-01T10:00:00Z") +
          event("MODIFIED", reclaimed, "2026-11-01T11:00:00Z"));
  auto p =
      replay::computeUsagePeriod(*ledger, at("2026-11-01T10:00:00Z"), at("2026-11-01T12:00:00Z"),
                                 replay::GroupBy::kWorkload, std::nullopt);
  const auto* r = rowOf(p, "ns/w", "nvidia.com/gpu");
  REQUIRE(r != nullptr);
  // 4 GPUs for an hour, then 2 for an hour.
  CHECK(r->reserved.seconds() == "21600.000000000");

  const auto h = replay::workloadHistory(*ledger, "ns", "w", std::nullopt, std::nullopt);
  REQUIRE(h.found);
  REQUIRE(!h.entries.empty());
  const auto& last = h.entries.back();
  CHECK(last.event == "ReclaimablePodsChanged");
  CHECK(last.detail == "main: 2 reclaimable");
  CHECK(q(last.recorded, "nvidia.com/gpu") == "4");
  CHECK(q(last.usage, "nvidia.com/gpu") == "2");
  for (const auto& e : h.entries) CHECK(e.event != "ChargeChanged");
}
