// The fleet on the command line (docs/reference.md, "The fleet"):
//   ledger-ingest ... --publish URLS --cluster-name NAME   ship while recording
//   ledger-ingest --from-nats URLS --fleet DIR             keep the fleet's copies
//   ledger-replay publish --to URLS --cluster-name NAME    ship an existing ledger
//   ledger-query --fleet DIR state|usage|report|workload   ask every copy
//   ledger-replay --fleet DIR verify                       check every copy
//
// Throws UsageError for bad flags and ProgramError with the fleet's exit
// codes (fleet_error.h): a refused record 3, a gap 2, NATS gone for good 4.
// Not thread-safe (one command per process).
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ingest/fleet/publisher.h"
#include "ledger/ledger.h"
#include "tools/query_commands.h"

namespace ledger::cli {

// --publish, --cluster-name, --stream, --stream-replicas, --nats-token-file,
// --nats-ca, --from-nats, --fleet, --durable, --exit-when-idle.
boost::program_options::options_description fleetOptions();
// The options `ledger-replay publish` and `--fleet` add to ledger-replay.
boost::program_options::options_description replayFleetOptions();

// The publisher --publish asks for (nullptr without it), not yet started.
std::unique_ptr<fleet::Publisher> makePublisher(const boost::program_options::variables_map& vm,
                                                Ledger& ledger, const std::string& urls);

// ledger-ingest --from-nats URLS --fleet DIR.
int runFleetConsumer(const boost::program_options::variables_map& vm);
// ledger-replay publish: ships the ledger and returns once JetStream has
// acknowledged its last record.
int runPublish(const boost::program_options::variables_map& vm, const std::string& ledgerDir);

// The clusters under a fleet directory (name, path), by name; UsageError
// when it is not a directory.
std::vector<std::pair<std::string, std::string>> fleetClusters(const std::string& dir);

// ledger-query --fleet DIR COMMAND: the command on every copy, each answer
// tagged with its cluster; `report` sums exactly, by cluster with
// --by cluster.
int runFleetQuery(const std::string& dir, const std::string& command, const QueryArgs& args,
                  std::ostream& out);

// Runs `each` on every copy opened read-only, for a per-cluster command
// (ledger-replay --fleet DIR verify): with JSON output the answers become
// {"clusters": [{"cluster": NAME, ...answer}]}, else each is headed by its
// cluster. `each` returning nullopt leaves its cluster out (a workload it
// never saw). Returns the worst exit code, or nullopt, printing nothing,
// when every cluster was left out.
std::optional<int> forEachFleetCopy(
    const std::string& dir, bool json, std::ostream& out,
    const std::function<std::optional<int>(const Ledger&, std::ostream&)>& each);

}  // namespace ledger::cli
