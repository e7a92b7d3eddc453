// The fleet on the command line (docs/reference.md, "The fleet"):
//   ledger-ingest ... --publish URLS --cluster-name NAME   ship while recording
//   ledger-ingest --from-nats URLS --fleet DIR             keep the fleet's copies
//   ledger-replay publish --to URLS --cluster-name NAME    ship an existing ledger
// Asking the fleet's copies (ledger-query --fleet, ledger-replay --fleet
// verify) is tools/fleet_query.h, which links no NATS.
//
// Throws UsageError for bad flags and ProgramError with the fleet's exit
// codes (fleet_error.h): a gap 2, NATS gone for good 4; a batch consumer
// (--exit-when-idle) that refused messages exits 3 once it is through.
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
// --nats-ca, --signing-key, --from-nats, --fleet, --durable, --exit-when-idle,
// --trusted-keys, --allow-unsigned, --seq-window, --max-held-mb.
boost::program_options::options_description fleetOptions();
// The options `ledger-replay publish` and `--fleet` add to ledger-replay.
boost::program_options::options_description replayFleetOptions();

// The publisher --publish asks for (nullptr without it), not yet started.
std::unique_ptr<fleet::Publisher> makePublisher(const boost::program_options::variables_map& vm,
                                                Ledger& ledger, const std::string& urls);

// ledger-replay keygen --out FILE: a cluster's Ed25519 key pair.
int runKeygen(const boost::program_options::variables_map& vm);
// ledger-ingest --from-nats URLS --fleet DIR.
int runFleetConsumer(const boost::program_options::variables_map& vm);
// ledger-replay publish: ships the ledger and returns once JetStream has
// acknowledged its last record.
int runPublish(const boost::program_options::variables_map& vm, const std::string& ledgerDir);

}  // namespace ledger::cli
