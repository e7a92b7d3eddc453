// ledger-serve: a read-only Kubernetes API over the ledger at any moment,
// the ledger's own answers, and the web view (docs/reference.md "serve").
// `ledger-query serve` runs this program.
#include <boost/program_options.hpp>
#include <iostream>

#include "tools/archive/archive_command.h"
#include "tools/cli.h"
#include "tools/serve_command.h"

namespace po = boost::program_options;
using namespace ledger;

int main(int argc, char** argv) {
  po::options_description opts(
      "ledger-serve [options] (also: ledger-query serve [options])\noptions");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("version", "print the version")
    ("ledger", po::value<std::string>()->default_value(""), "ledger directory (default $LEDGER_DIR, else ./ledger-data)")
    ("archive", po::value<std::string>(), "the archive of the cut ledger (ledger-replay archive): answers the moments before the cut")
    ("fleet", po::value<std::string>(), "serve every cluster's copy in this fleet directory (ledger-ingest --from-nats), each under /clusters/NAME/, instead of one ledger")
    ("listen", po::value<std::string>()->default_value("127.0.0.1:9480"), "HOST:PORT (beyond loopback only over TLS, with --token-file or client certificates)")
    ("token-file", po::value<std::string>(), "require this bearer token")
    ("tls-cert", po::value<std::string>(), "TLS certificate (PEM)")
    ("tls-key", po::value<std::string>(), "TLS private key (PEM)")
    ("tls-client-ca", po::value<std::string>(), "require client certificates signed by this CA")
    ("max-connections-per-address", po::value<std::size_t>()->default_value(64), "connections one client address may hold at once; more are answered 503 (0: no bound)")
    ("log-format", po::value<std::string>()->default_value("text"), "text or json");
  // clang-format on
  po::variables_map vm;
  if (auto exit = cli::parseCommandLine("ledger-serve", argc, argv, opts, {}, &vm)) return *exit;
  return cli::runProgram("ledger-serve", [&]() -> int {
    cli::setUpLogging(vm["log-format"].as<std::string>(), "info");
    serve::ServeOptions options;
    if (vm.count("fleet")) {
      if (!vm["ledger"].as<std::string>().empty())
        throw cli::UsageError("--ledger and --fleet go apart: serve one ledger or a fleet");
      options.fleetDir = vm["fleet"].as<std::string>();
    } else {
      options.ledgerDir = cli::resolveLedgerDir(vm["ledger"].as<std::string>());
    }
    if (vm.count("archive")) {
      if (vm.count("fleet")) throw cli::UsageError("--archive goes with one ledger, not --fleet");
      // Refused as the CLI refuses it: a ledger not cut (exit 1), a DIR
      // whose seal is not the ledger's link (exit 3).
      cli::openArchiveOf(*cli::openForReading(options.ledgerDir), vm["archive"].as<std::string>());
      options.archiveDir = vm["archive"].as<std::string>();
    }
    options.listen = vm["listen"].as<std::string>();
    options.maxConnectionsPerAddress = vm["max-connections-per-address"].as<std::size_t>();
    if (vm.count("token-file")) options.tokenFile = vm["token-file"].as<std::string>();
    if (vm.count("tls-cert")) options.tlsCert = vm["tls-cert"].as<std::string>();
    if (vm.count("tls-key")) options.tlsKey = vm["tls-key"].as<std::string>();
    if (vm.count("tls-client-ca")) options.tlsClientCa = vm["tls-client-ca"].as<std::string>();
    return cli::runServe(std::move(options));
  });
}
