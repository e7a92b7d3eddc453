// The ledger-query commands, separated from argument parsing so tests can
// run them on a ledger and read what they print.
//
// Throws UsageError on bad arguments, ReplayError on an unreadable ledger.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "ledger/ledger.h"
#include "tools/cli.h"

namespace ledger::cli {

struct QueryArgs {
  OutputFormat output = OutputFormat::kJson;
  bool useCheckpoints = true;
  std::string target;  // NS/NAME
  std::optional<std::int64_t> at, from, to;
  std::optional<std::int64_t> stepNs;  // usage: a series over --from..--to
  std::string stepText;
  std::optional<std::uint64_t> seq;
  std::optional<std::string> clusterQueue, svg, workloadFile;
  std::string by = "cluster-queue";
};

int runQuery(const Ledger& ledger, const std::string& command, const QueryArgs& args,
             std::ostream& out);

// A moment the ledger can answer for: throws UsageError for one before its
// first record (it observed nothing then), or when it holds none; warns on
// stderr for one inside a gap (docs/reference.md "Observation").
void checkMoment(const Ledger& ledger, std::int64_t atNs);

}  // namespace ledger::cli
