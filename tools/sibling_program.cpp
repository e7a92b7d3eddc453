#include "tools/sibling_program.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "tools/program.h"

namespace ledger::cli {

std::string siblingProgramPath(const std::string& program) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw ProgramError("cannot find this program's own path: " + ec.message(), kExitUsage);
  return (self.parent_path() / program).string();
}

void execSiblingProgram(const std::string& program, const std::vector<std::string>& args) {
  const std::string path = siblingProgramPath(program);
  std::vector<char*> argv;
  argv.reserve(args.size() + 2);
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execv(path.c_str(), argv.data());
  const int error = errno;
  throw ProgramError(path + ": " + std::strerror(error) + " (" + program +
                         " is installed beside the program that runs it)",
                     kExitUsage);
}

}  // namespace ledger::cli
