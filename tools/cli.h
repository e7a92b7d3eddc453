// What the three programs share (CONTRACT.md): --ledger resolution, output
// format, exit codes, time arguments, version text, logging set-up.
//
// Throws UsageError (exit 1) on bad arguments; the programs catch it in main.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <boost/program_options.hpp>

#include "ledger.h"

namespace ledger::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,    // bad usage: unknown flag, bad time, missing, busy or unreadable ledger
  kExitInput = 2,    // some input rejected; everything accepted was committed
  kExitCorrupt = 3,  // the ledger failed verification or is corrupt
  kExitLive = 4,     // a live source failed for good: the ledger's storage refused (disk full)
};

// The exit code for a ledger Status, the one mapping every program uses
// (docs/reference.md, "Exit codes"): corruption and an unknown format 3; a
// missing ledger, one another process holds (busy), one this user may not
// read or write, and an impossible request 1 (none says anything about the
// ledger's content, and each is fixed by how the program is run); the
// storage failing (disk full, I/O error) 4; OK 0.
int exitCodeFor(const Status& status);

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The ledger cannot be used: exit with `code` (exitCodeFor the status).
class LedgerOpenError : public std::runtime_error {
 public:
  LedgerOpenError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  explicit LedgerOpenError(const Status& status)
      : LedgerOpenError(status.toString(), exitCodeFor(status)) {}
  int code() const { return code_; }

 private:
  int code_;
};

enum class OutputFormat { kJson, kTable, kCsv };

// --ledger, else $LEDGER_DIR, else ./ledger-data.
std::string resolveLedgerDir(const std::string& flag);
// "json", "table", "csv" (when allowed); empty: table on a terminal, else json.
OutputFormat resolveOutput(const std::string& flag, bool allowCsv = false);
// What a time flag does with a valid RFC 3339 time outside the ledger's range
// (rfc3339.h: int64 ns, 1677-09-21 to 2262-04-11).
enum class TimeBeyondRange {
  kReject,  // a period's bound (--from, --to): its length would be wrong
  kClamp,   // a moment (--at, --until): after (before) every record it can hold
};
// RFC 3339 or "now"; throws UsageError naming the flag.
std::int64_t parseTimeArg(const std::string& value, const char* flag,
                          TimeBeyondRange beyond = TimeBeyondRange::kReject);

// Boost.Program_options reads "-1" into an unsigned option as 2^64-1
// (lexical_cast wraps): throws UsageError naming any unsigned option whose
// text is negative.
void rejectNegativeUnsigned(const boost::program_options::parsed_options& parsed);
std::string versionText(const char* program);
// spdlog to stderr; "json" gives one JSON object per line.
void setUpLogging(const std::string& format, const std::string& level);

// Parses the command line into `vm`; handles --help and --version. Returns
// the exit code when the program should stop here (help, version, or a
// usage error already reported on stderr), nullopt to go on.
std::optional<int> parseCommandLine(
    const char* program, int argc, char** argv,
    const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional,
    boost::program_options::variables_map* vm);

// Reports are computed from the projection. One an older projector wrote
// (ledger/format.h, kProjectionFormat) may lack what this build reads, and
// `verify` rejects it where it differs from this build's: a report from it
// says so on stderr, with the rebuild that fixes it, never silently.
void warnIfOlderProjections(const Ledger& ledger);

// Opens an existing ledger read-only. Throws LedgerOpenError.
std::unique_ptr<Ledger> openForReading(const std::string& dir);
// Opens an existing ledger for writing (maintenance commands). Throws
// LedgerOpenError.
std::unique_ptr<Ledger> openForWriting(const std::string& dir);

}  // namespace ledger::cli
