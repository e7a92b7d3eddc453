// `ledger-ingest --watch`: the sidecar daemon's command line.
//
// watchOptions() describes its flags; runWatch() opens the ledger, resolves
// the API server configuration, runs the daemon until SIGTERM or SIGINT, and
// returns the exit code: 0 after a clean stop (everything received is
// committed), 1 bad usage or configuration, 3 the ledger is corrupt, 4 the
// ledger refused a write (a live source failed for good).
//
// Not thread-safe (owns the process' signal mask). Never throws: every error
// becomes an exit code and a log line.
#pragma once

#include <boost/program_options.hpp>

namespace ledger::cli {

boost::program_options::options_description watchOptions();
int runWatch(const boost::program_options::variables_map& vm);

}  // namespace ledger::cli
