// The --watch daemon's /metrics on an existing ledger (docs/performance.md,
// "The first scrape"): the live state restored as the daemon restores it
// (tools/live_state.h), then the time of the first scrape (the report built
// and rendered), of later scrapes of the same state (the rendered text
// kept), and of a scrape after a change (the report built and rendered
// again, which is what every scrape of a live cluster costs once a second;
// timed as the first scrape of a live state restored anew).
// The HTTP transfer is left out: it is the same for all three.
//
// Thread-compatible. Errors: throws what opening or folding the ledger
// throws (cli::ProgramError, replay::ReplayError).
#pragma once

#include <ostream>
#include <string>

namespace ledger::bench {

// Prints a markdown table (seconds; the medians of `runs`).
void runMetricsScrape(const std::string& ledgerDir, int runs, std::ostream& out);

}  // namespace ledger::bench
