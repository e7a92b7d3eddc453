// Questions timed end to end, as a user meets them: the real `ledger-query`
// program of the same build as ledger-bench, started as a process of its own
// and timed from its start to its exit (start-up, opening the ledger, the
// answer and its printing included), the median of several runs.
//
// The questions are a list (endToEndQuestions): a new row is one entry
// there, printed at every size with its ratio to the full replay.
// Thread-compatible. Errors: a question that cannot be asked (no
// ledger-query beside this program, a run that fails) comes back as a
// failed EndToEndAnswer; factsPhase throws like the other phases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/bench/child.h"

namespace ledger::bench {

// What the questions need to know about the ledger they are asked of.
struct LedgerFacts {
  std::int64_t firstNs = 0;  // the first record's time
  std::int64_t lastNs = 0;   // the last record's time
  std::string workload;      // NAMESPACE/NAME of a workload the ledger holds; "" if none
};

// A child phase (runPhase): the facts of the ledger at `dir`, as texts
// (firstNs, lastNs, workload); metric: records.
Metrics factsPhase(const std::string& dir);
LedgerFacts factsFrom(const PhaseOutcome& outcome);

struct EndToEndQuestion {
  std::string row;                // the table's row, e.g. "`ledger-query state --at T`"
  std::string brief;              // the scaling table's column, e.g. "state"
  std::vector<std::string> args;  // ledger-query's arguments (--ledger DIR is added)
  // The targets, each shown where it applies: a wall time at 10M
  // records, and a share of the full replay's time at 1M.
  std::optional<double> targetMsAt10M;
  std::optional<double> targetRatioAt1M;
};

// The questions asked at every size, in the order printed.
std::vector<EndToEndQuestion> endToEndQuestions(const LedgerFacts& facts);

struct EndToEndAnswer {
  EndToEndQuestion question;
  bool ok = false;
  std::string error;  // why not ok: the program's stderr, or what failed
  int runs = 0;
  double medianMs = 0, minMs = 0, maxMs = 0;
};

// `ledger-query` beside this program: in its directory, else in the parent
// (the build tree keeps ledger-bench in tools/bench/, ledger-query in
// tools/). Empty when there is none.
std::string findLedgerQuery();

// Runs `question` against the ledger at `dir` once untimed (its files into
// the page cache, as for the replay it is compared with), then `runs` times
// timed; stdout is discarded.
EndToEndAnswer askEndToEnd(const std::string& program, const std::string& dir,
                           const EndToEndQuestion& question, int runs);

}  // namespace ledger::bench
