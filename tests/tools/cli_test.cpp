// What the programs share (tools/cli.h): time flags outside the ledger's
// range, and unsigned flags given a negative number.
#include <limits>

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
                    Catch::Contains("is not an RFC 3339 time"));
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
