// The ledger-query commands, separated from argument parsing so tests can
// run them on a ledger and read what they print.
//
// Throws UsageError on bad arguments, ReplayError on an unreadable ledger,
// ProgramError (exit 3) for an answer refused while the ledger's newest
// verification failed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "ledger/ledger.h"
#include "ledger/verification_record.h"
#include "tools/cli.h"
#include "tools/report_filter.h"

namespace ledger::cli {

// What an answer does while the ledger's newest verification failed (or its
// record is damaged): docs/reference.md, "The proof line".
enum class FailedVerification {
  kRefuse,  // exit 3 naming the failure (the CLI's default)
  kWarn,    // answer, with a warning on stderr (--ignore-failed-verify)
  kQuiet,   // answer; the caller says it its own way (serve's Warning header)
};

struct QueryArgs {
  FailedVerification failedVerification = FailedVerification::kRefuse;
  OutputFormat output = OutputFormat::kJson;
  bool useCheckpoints = true;
  std::string target;  // NS/NAME
  std::optional<std::int64_t> at, from, to;
  std::optional<std::int64_t> stepNs;  // usage: a series over --from..--to
  std::string stepText;
  std::optional<std::uint64_t> seq;
  std::optional<std::string> clusterQueue, svg, workloadFile;
  std::string by = "cluster-queue";
  ReportFilter filter;  // state
  bool wide = false;    // state -o table: every pool counter
};

// Every answer carries the ledger's proof (tools/render/proof_format.h):
// JSON gets its members, a table its line at the end, CSV its line on
// stderr (the CSV stays one table).
int runQuery(const Ledger& ledger, const std::string& command, const QueryArgs& args,
             std::ostream& out);

// The ledger's newest verification, as an answer states it; throws
// ProgramError (exit 3) when it failed or its record is damaged and `policy`
// is kRefuse (a damaged record otherwise reads as none).
std::optional<Verification> proofFor(const Ledger& ledger, FailedVerification policy);

// Runs `answer`, which prints one answer in `output` to the stream it is
// given, and prints that to `out` with the proof (as runQuery does);
// returns what `answer` returns.
int answerWithProof(const Ledger& ledger, OutputFormat output, FailedVerification policy,
                    std::ostream& out, const std::function<int(std::ostream&)>& answer);

// A moment the ledger can answer for: throws UsageError for one before its
// first record (it observed nothing then), or when it holds none; warns on
// stderr for one inside a gap (docs/reference.md "Observation").
void checkMoment(const Ledger& ledger, std::int64_t atNs);

}  // namespace ledger::cli
