// Flags per command (tools/command_flags.h): one a command does not read is
// bad usage naming the command's flags.
#include <boost/program_options.hpp>

#include "tests/test_support.h"
#include "tools/command_flags.h"
#include "tools/program.h"

using namespace ledger;
namespace po = boost::program_options;

namespace command_flags_test {

po::variables_map parse(std::vector<const char*> argv) {
  po::options_description opts;
  opts.add_options()("ledger", po::value<std::string>()->default_value(""))(
      "at", po::value<std::string>())("by", po::value<std::string>()->default_value("x"))(
      "step", po::value<std::string>())("command", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("command", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(static_cast<int>(argv.size()), argv.data())
                .options(opts)
                .positional(pos)
                .run(),
            vm);
  return vm;
}

const cli::CommandFlags kFlags{.everyCommand = {"ledger"},
                               .positional = {"command"},
                               .perCommand = {{"state", {"at"}}, {"report", {"by"}}}};

TEST_CASE("a flag the command does not read is bad usage naming its flags", "[cli][flags]") {
  CHECK_NOTHROW(cli::rejectUnusedFlags(parse({"p", "state", "--at", "now", "--ledger", "l"}),
                                       "state", kFlags));
  // --by's default is not given: only what the command line says counts.
  CHECK_NOTHROW(cli::rejectUnusedFlags(parse({"p", "state"}), "state", kFlags));
  CHECK_THROWS_AS(cli::rejectUnusedFlags(parse({"p", "state", "--by", "flavor"}), "state", kFlags),
                  cli::UsageError);
  CHECK_THROWS_WITH(cli::rejectUnusedFlags(parse({"p", "state", "--step", "5m"}), "state", kFlags),
                    "--step is not a flag of 'state': it reads --at (and --ledger)");
  CHECK_THROWS_WITH(cli::rejectUnusedFlags(parse({"p", "report", "--at", "now"}), "report", kFlags),
                    "--at is not a flag of 'report': it reads --by (and --ledger)");
  // An unknown command is the caller's to report.
  CHECK_NOTHROW(cli::rejectUnusedFlags(parse({"p", "nope", "--at", "now"}), "nope", kFlags));
}

}  // namespace command_flags_test
