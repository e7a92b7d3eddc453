// What the programs share (tools/cli.h): unsigned flags given a negative
// number.
#include <limits>

#include "cli.h"
#include "kueue_objects.h"
#include "query_commands.h"
#include "test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace po = boost::program_options;

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
