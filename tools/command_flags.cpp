#include "tools/command_flags.h"

#include <algorithm>

#include "tools/program.h"

namespace ledger::cli {

namespace {

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string flagList(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "--" : ", --") + name;
  return text.empty() ? "none" : text;
}

}  // namespace

void rejectUnusedFlags(const boost::program_options::variables_map& vm, const std::string& command,
                       const CommandFlags& flags) {
  const auto own = flags.perCommand.find(command);
  if (own == flags.perCommand.end()) return;
  for (const auto& [name, value] : vm) {
    if (value.defaulted() || listed(flags.positional, name) || listed(flags.everyCommand, name) ||
        listed(own->second, name)) {
      continue;
    }
    const std::string who = command.empty() ? "the run without a command" : "'" + command + "'";
    throw UsageError("--" + name + " is not a flag of " + who + ": it reads " +
                     flagList(own->second) + " (and " + flagList(flags.everyCommand) + ")");
  }
}

}  // namespace ledger::cli
