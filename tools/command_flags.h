// Which flags each command of a program reads (docs/reference.md): a flag
// given to a command that does not read it is bad usage, not silently
// ignored (`state --by flavor` used to print the unfiltered state).
//
// Pure functions over a parsed command line; no shared state. Throws
// UsageError (tools/program.h, exit 1) naming the flag, the command and the
// flags the command reads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace ledger::cli {

struct CommandFlags {
  // Flags (without "--") every command reads: --ledger, --output, ...
  std::vector<std::string> everyCommand;
  // Positional arguments' option names (never named in a message).
  std::vector<std::string> positional;
  // Per command ("" for the program run without one): the flags it reads
  // besides everyCommand.
  std::map<std::string, std::vector<std::string>> perCommand;
};

// Throws UsageError for the first option given on the command line (not a
// default) that `command` does not read. A command missing from perCommand
// is left to the caller (it reports unknown commands its own way).
void rejectUnusedFlags(const boost::program_options::variables_map& vm, const std::string& command,
                       const CommandFlags& flags);

}  // namespace ledger::cli
