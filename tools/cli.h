// What the programs share (docs/reference.md): --ledger resolution, output
// format, time and step flags (time_flags.h), version text, logging set-up.
// Exit codes and the error path are program.h's.
//
// Throws UsageError (exit 1) on bad arguments and ProgramError when a ledger
// cannot be opened; runProgram (program.h) reports them. Not thread-safe
// (setUpLogging replaces spdlog's default logger).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/program_options.hpp>

#include "ledger/ledger.h"
#include "tools/program.h"
#include "tools/time_flags.h"

namespace ledger::cli {

enum class OutputFormat { kJson, kTable, kCsv };

// --ledger, else $LEDGER_DIR, else ./ledger-data.
std::string resolveLedgerDir(const std::string& flag);
// "json", "table", "csv" (when allowed); empty: table on a terminal, else json.
OutputFormat resolveOutput(const std::string& flag, bool allowCsv = false);
// Boost.Program_options reads "-1" into an unsigned option as 2^64-1
// (lexical_cast wraps): throws UsageError naming any unsigned option whose
// text is negative.
void rejectNegativeUnsigned(const boost::program_options::parsed_options& parsed);
std::string versionText(const char* program);
// spdlog to stderr; "json" gives one JSON object per line, its message
// written by jsonStringBody.
void setUpLogging(const std::string& format, const std::string& level);
// The body of a JSON string holding `text`: quotes, backslashes and control
// characters escaped, each byte that is not part of well-formed UTF-8 as
// U+FFFD, so the line parses whatever bytes the message quotes.
std::string jsonStringBody(std::string_view text);

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

// Opens an existing ledger read-only. Throws ProgramError(status).
std::unique_ptr<Ledger> openForReading(const std::string& dir);
// Opens an existing ledger for writing (maintenance commands). Throws
// ProgramError(status).
std::unique_ptr<Ledger> openForWriting(const std::string& dir);

}  // namespace ledger::cli
