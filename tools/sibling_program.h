// Running another of the ledger's programs in place of this one.
//
// `ledger-query serve` is `ledger-serve`: the HTTP server, its TLS and
// compression libraries live in a program of their own, so the questions
// ledger-query answers by the thousand from a shell do not load them at
// every start (docs/performance.md, "A question end to end"). The programs
// are installed side by side (meson's build tree, deploy/Dockerfile), so the
// other one is looked up next to this one's own executable, never on PATH.
//
// Thread safety: call before starting any thread (the process image is
// replaced). Errors: throws ProgramError (exit 1) when the program is not
// there or cannot be run; on success it does not return.
#pragma once

#include <string>
#include <vector>

namespace ledger::cli {

// The path `program` has beside the running executable.
std::string siblingProgramPath(const std::string& program);

// Replaces this process with `program` from beside it, called with `args`
// (not counting its name). The process keeps its id, standard streams and
// signals' default dispositions.
[[noreturn]] void execSiblingProgram(const std::string& program,
                                     const std::vector<std::string>& args);

}  // namespace ledger::cli
