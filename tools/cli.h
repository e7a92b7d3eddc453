// What the three programs share (CONTRACT.md): --ledger resolution, output
// format, exit codes, time arguments, version text, logging set-up.
//
// Throws UsageError (exit 1) on bad arguments; the programs catch it in main.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace ledger::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,    // bad usage: unknown flag, bad time, missing ledger
  kExitInput = 2,    // some input rejected; everything accepted was committed
  kExitCorrupt = 3,  // the ledger failed verification or is corrupt
  kExitLive = 4,     // a live source failed for good
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class OutputFormat { kJson, kTable, kCsv };

// --ledger, else $LEDGER_DIR, else ./ledger-data.
std::string resolveLedgerDir(const std::string& flag);
// "json", "table", "csv" (when allowed); empty: table on a terminal, else json.
OutputFormat resolveOutput(const std::string& flag, bool allowCsv = false);
// RFC 3339 or "now"; throws UsageError naming the flag.
std::int64_t parseTimeArg(const std::string& value, const char* flag);
std::string versionText(const char* program);
// spdlog to stderr; "json" gives one JSON object per line.
void setUpLogging(const std::string& format, const std::string& level);

}  // namespace ledger::cli
