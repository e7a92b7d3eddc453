// What the programs share (tools/cli.h): time flags outside the ledger's
// range, and unsigned flags given a negative number.
#include <limits>

#include "replay/kueue/usage_rollups.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tools/cli.h"
#include "tools/query_commands.h"

using namespace ledger;
using namespace ledger::testing;

namespace po = boost::program_options;

TEST_CASE("time flags: a period bound out of range is bad usage, a moment is clamped",
          "[cli][time]") {
  // Used to wrap: 9999-12-31 became 1816-03-30.
  CHECK_THROWS_AS(cli::parseTimeArg("9999-12-31T23:59:59Z", "--from"), cli::UsageError);
  CHECK_THROWS_WITH(cli::parseTimeArg("1000-01-01T00:00:00Z", "--to"),
                    Catch::StartsWith("--to '1000-01-01T00:00:00Z' is outside the ledger's time "
                                      "range (1677-09-21T00:12:43.145224192Z"));
  CHECK(cli::parseTimeArg("9999-12-31T23:59:59Z", "--at", cli::TimeBeyondRange::kClamp) ==
        std::numeric_limits<std::int64_t>::max());
  CHECK(cli::parseTimeArg("0001-01-01T00:00:00Z", "--at", cli::TimeBeyondRange::kClamp) ==
        std::numeric_limits<std::int64_t>::min());
  CHECK_THROWS_WITH(cli::parseTimeArg("2026-02-30T00:00:00Z", "--at", cli::TimeBeyondRange::kClamp),
                    Catch::Contains("is not a time: give an RFC 3339 time"));
}

TEST_CASE("state --at far in the future is the state at the end of the log", "[cli][time]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger,
             event("ADDED", k8s::resourceFlavor("default"), "2026-11-01T00:00:00Z") +
                 event("ADDED", k8s::clusterQueue("cq", "v1beta2", "", {{"default", {{"cpu", 4}}}}),
                       "2026-11-01T00:00:01Z"));
  cli::QueryArgs args;
  args.at = cli::parseTimeArg("9999-12-31T23:59:59Z", "--at", cli::TimeBeyondRange::kClamp);
  std::ostringstream out;
  REQUIRE(cli::runQuery(*ledger, "state", args, out) == cli::kExitOk);
  const auto j = nlohmann::json::parse(out.str());
  CHECK(j["at"]["seq"] == 2);
  CHECK(j["clusterQueues"].size() == 1);
}

TEST_CASE("unsigned flags: a negative number is bad usage, not 2^64-1", "[cli]") {
  po::options_description opts;
  opts.add_options()("seq", po::value<std::uint64_t>(), "")("batch", po::value<std::size_t>(), "")(
      "name", po::value<std::string>(), "");
  po::positional_options_description pos;
  auto parse = [&](std::vector<std::string> words) {
    words.insert(words.begin(), "prog");
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    po::variables_map vm;
    return cli::parseCommandLine("prog", static_cast<int>(argv.size()), argv.data(), opts, pos,
                                 &vm);
  };
  CHECK(parse({"--seq=-1"}) == cli::kExitUsage);
  CHECK(parse({"--seq", "-1"}) == cli::kExitUsage);
  CHECK(parse({"--batch= -5"}) == cli::kExitUsage);
  CHECK(parse({"--seq", "7", "--batch", "3", "--name", "-x"}) == std::nullopt);

  const po::parsed_options parsed =
      po::command_line_parser(std::vector<std::string>{"--seq=-2"}).options(opts).run();
  CHECK_THROWS_WITH(cli::rejectNegativeUnsigned(parsed),
                    "--seq must be a non-negative integer, not '-2'");
}

TEST_CASE("step flags: units, sums, and what is refused", "[cli]") {
  constexpr std::int64_t s = 1000000000;
  CHECK(cli::parseStepArg("30s", "--step") == 30 * s);
  CHECK(cli::parseStepArg("5m", "--step") == 300 * s);
  CHECK(cli::parseStepArg("1h30m", "--step") == 5400 * s);
  CHECK(cli::parseStepArg("1d", "--step") == 86400 * s);
  CHECK(cli::parseStepArg("2w", "--step") == 14 * 86400 * s);
  CHECK_THROWS_WITH(cli::parseStepArg("5", "--step"), Catch::Contains("is not a step"));
  CHECK_THROWS_WITH(cli::parseStepArg("", "--step"), Catch::Contains("is not a step"));
  CHECK_THROWS_WITH(cli::parseStepArg("5x", "--step"),
                    Catch::Contains("has an unknown unit at byte 2"));
  CHECK_THROWS_WITH(cli::parseStepArg("0m", "--step"), Catch::Contains("is zero"));
  CHECK_THROWS_WITH(cli::parseStepArg("-5m", "--step"), Catch::Contains("is not a step"));
  CHECK_THROWS_WITH(cli::parseStepArg("400d", "--step"), Catch::Contains("longer than a year"));
  CHECK_THROWS_WITH(cli::parseStepArg("99999999999h", "--step"), Catch::Contains("is not a step"));
}

TEST_CASE("usage --step: mean reserved, admitted and nominal per step", "[cli][rollups]") {
  using namespace ledger::testing::k8s;
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  // cq holds 4 CPUs from 00:00; w reserves 2 at 00:30, is admitted at 01:00,
  // finishes at 01:30; a flavor created at 05:00 closes the hours before.
  Json spec = {{"containers", Json::array({container("c", {{"cpu", "2"}})})}};
  Json w = workload("ns", "w", "lq", Json::array({podSet("main", 1, spec)}));
  auto rv = [](Json o, const std::string& v) {
    o["metadata"]["resourceVersion"] = v;
    return o;
  };
  const Json reserved = admitted(w, "cq", "default", {{"cpu", "2"}}, false);
  const Json running = admitted(w, "cq", "default", {{"cpu", "2"}});
  REQUIRE(
      ingestText(*ledger,
                 event("ADDED", resourceFlavor("default"), "2026-11-01T00:00:00Z") +
                     event("ADDED", clusterQueue("cq", "v1beta2", "", {{"default", {{"cpu", 4}}}}),
                           "2026-11-01T00:00:00Z") +
                     event("ADDED", rv(reserved, "2"), "2026-11-01T00:30:00Z") +
                     event("MODIFIED", rv(running, "3"), "2026-11-01T01:00:00Z") +
                     event("MODIFIED", rv(finished(running), "4"), "2026-11-01T01:30:00Z") +
                     event("ADDED", resourceFlavor("late"), "2026-11-01T05:00:00Z"))
          .rejected == 0);
  REQUIRE(replay::writeUsageRollups(*ledger) > 0);
  cli::QueryArgs args;
  args.from = cli::parseTimeArg("2026-11-01T00:00:00Z", "--from");
  args.to = cli::parseTimeArg("2026-11-01T02:00:00Z", "--to");
  auto series = [&](const std::string& step) {
    args.stepText = step;
    args.stepNs = cli::parseStepArg(step, "--step");
    std::ostringstream out;
    // Exit 0, or a UsageError thrown for main to map.
    cli::runQuery(*ledger, "usage", args, out);
    return out.str();
  };
  using Points = std::vector<std::array<std::string, 4>>;
  auto points = [](const std::string& json) {
    const auto j = nlohmann::json::parse(json);
    REQUIRE(j["series"].size() == 1);
    CHECK(j["series"][0]["clusterQueue"] == "cq");
    CHECK(j["series"][0]["flavor"] == "default");
    CHECK(j["series"][0]["resource"] == "cpu");
    Points out;
    for (const auto& p : j["series"][0]["points"]) {
      out.push_back({p["time"], p["reserved"], p["admitted"], p["nominal"]});
    }
    return out;
  };
  SECTION("whole hours, read from the rollups") {
    CHECK(points(series("1h")) ==
          Points{{"2026-11-01T00:00:00Z", "1", "0", "4"}, {"2026-11-01T01:00:00Z", "1", "1", "4"}});
  }
  SECTION("half hours, integrated from the log") {
    CHECK(points(series("30m")) == Points{{"2026-11-01T00:00:00Z", "0", "0", "4"},
                                          {"2026-11-01T00:30:00Z", "2", "0", "4"},
                                          {"2026-11-01T01:00:00Z", "2", "2", "4"},
                                          {"2026-11-01T01:30:00Z", "0", "0", "4"}});
  }
  SECTION("a last step shorter than the others, as CSV") {
    args.output = cli::OutputFormat::kCsv;
    args.to = cli::parseTimeArg("2026-11-01T00:45:00Z", "--to");
    CHECK(series("40m") ==
          "time,cluster_queue,flavor,resource,reserved,admitted,nominal,held,uncharged\n"
          "2026-11-01T00:00:00Z,cq,default,cpu,0.5,0,4,0,0\n"
          "2026-11-01T00:40:00Z,cq,default,cpu,2,0,4,0,0\n");
  }
  SECTION("bad periods are bad usage") {
    args.to = args.from;
    CHECK_THROWS_WITH(series("1h"), Catch::Contains("--to must be after --from"));
    args.to = cli::parseTimeArg("2026-11-03T00:00:00Z", "--to");
    CHECK_THROWS_WITH(series("1s"), Catch::Contains("at most 100000"));
    args.from.reset();
    CHECK_THROWS_WITH(series("1h"), Catch::Contains("needs --from"));
  }
}

TEST_CASE("usage --step: held and uncharged beside reserved", "[cli][held]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  REQUIRE(ingestText(*ledger, demoStream()).errors.empty());
  cli::QueryArgs args;
  args.from = cli::parseTimeArg("2026-11-20T08:30:00Z", "--from");
  args.to = cli::parseTimeArg("2026-11-20T09:00:00Z", "--to");
  args.stepText = "15m";
  args.stepNs = cli::parseStepArg("15m", "--step");
  std::ostringstream out;
  cli::runQuery(*ledger, "usage", args, out);
  const auto j = nlohmann::json::parse(out.str());
  std::map<std::string, std::vector<std::array<std::string, 3>>> byKey;
  for (const auto& s : j["series"]) {
    auto& points = byKey[s["clusterQueue"].get<std::string>() + " " +
                         s["flavor"].get<std::string>() + " " + s["resource"].get<std::string>()];
    for (const auto& p : s["points"]) points.push_back({p["reserved"], p["held"], p["uncharged"]});
  }
  // job-legacy-infer holds gpu-0 from 08:50:07, charged for no GPU: no
  // single flavor charges it (flavor "-"); 593 s of the last 900 s step.
  CHECK(byKey["team-b - nvidia.com/gpu"] ==
        std::vector<std::array<std::string, 3>>{{"0", "0", "0"},
                                                {"0", "0.658888889", "0.658888889"}});
  // Charged GPUs held as charged: held, nothing uncharged.
  CHECK(byKey["team-a default-flavor nvidia.com/gpu"].front() ==
        std::array<std::string, 3>{"0.666666667", "0.667777778", "0.001111111"});
  // A resource no claim holds: zeros.
  CHECK(byKey["team-b default-flavor cpu"].back()[1] == "0");
}

// --log-format json: a message quoting input bytes that are not UTF-8 (an
// event's uid holding 0xFF) still makes a line that parses, the bad bytes
// as U+FFFD and well-formed characters kept.
TEST_CASE("JSON log messages are valid JSON strings whatever bytes they quote", "[cli][log]") {
  const std::string quoted = std::string("uid \"a\xff") +
                             "\" \\ \x01\x7f caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" +
                             " overlong \xc0\x80 surrogate \xed\xa0\x80 cut \xe2\x82";
  const std::string body = cli::jsonStringBody(quoted);
  INFO(body);
  const auto parsed = nlohmann::json::parse("\"" + body + "\"", nullptr, false);
  REQUIRE(parsed.is_string());
  const std::string text = parsed.get<std::string>();
  const std::string replacement = "\xef\xbf\xbd";
  CHECK(text.starts_with("uid \"a" + replacement + "\" \\ \x01\x7f caf\xc3\xa9"));
  CHECK(text.find("\xe2\x82\xac \xf0\x9f\x98\x80") != std::string::npos);
  CHECK(text.find("overlong " + replacement + replacement) != std::string::npos);
  CHECK(text.find("surrogate " + replacement + replacement + replacement) != std::string::npos);
  CHECK(text.ends_with("cut " + replacement + replacement));
}
