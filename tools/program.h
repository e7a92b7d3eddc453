// The programs' one error path. Every main is
//
//   int main(int argc, char** argv) {
//     return cli::runProgram("ledger-replay", [&] { ...; return cli::kExitOk; });
//   }
//
// and runProgram is the one place that turns what the layers throw into a
// message and an exit code (docs/reference.md, "Exit codes"):
//   cli::UsageError            bad arguments                     1, "program: why"
//   cli::ProgramError          a code chosen by the program      its code
//   ingest::LedgerError        the ledger refused a write        exitCodeFor(status)
//   replay::ReplayError        the ledger could not be folded    exitCodeFor(status)
//   kj::Exception              a stored object does not decode   3
//   std::overflow_error        a quantity past the exact range   2
//   any other std::exception   a fault of the program            1, "internal error"
//
// Thread safety: runProgram runs the body on the calling thread; the
// exception types are plain values.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "ledger/status.h"

namespace ledger::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,    // bad usage: unknown flag, bad time, missing, busy or unreadable ledger
  kExitInput = 2,    // some input rejected; everything accepted was committed
  kExitCorrupt = 3,  // the ledger failed verification or is corrupt
  kExitLive = 4,     // a live source failed for good: the ledger's storage refused (disk full)
};

// The exit code for a ledger Status, the one mapping every program uses:
// corruption and an unknown format 3; a missing ledger, one another process
// holds (busy), one this user may not read or write, and an impossible
// request 1 (none says anything about the ledger's content, and each is
// fixed by how the program is run); the storage failing (disk full, I/O
// error) 4; OK 0.
int exitCodeFor(const Status& status);

// The tools layer's exception: stop the program with this message and code.
class ProgramError : public std::runtime_error {
 public:
  ProgramError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  // The ledger cannot be used: exitCodeFor(status).
  explicit ProgramError(const Status& status)
      : ProgramError(status.toString(), exitCodeFor(status)) {}
  int code() const { return code_; }

 private:
  int code_;
};

// Bad arguments: exit 1, the message prefixed with the program's name.
class UsageError : public ProgramError {
 public:
  explicit UsageError(const std::string& what) : ProgramError(what, kExitUsage) {}
};

// Runs `body` and returns its exit code, or the code for what it threw.
int runProgram(const char* program, const std::function<int()>& body);

}  // namespace ledger::cli
