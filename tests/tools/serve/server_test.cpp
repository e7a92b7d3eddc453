// What ledger-serve refuses to start with (tools/serve/server.h): beyond
// loopback, plain HTTP in any form (a bearer token would cross the network
// in clear), and TLS that lets anyone in. Each is a usage error
// (std::invalid_argument) raised before the ledger is opened or anything
// bound: the address is a documentation one (192.0.2.0/24, never
// assigned), so a check that let it through fails to bind instead.
#include "tools/serve/server.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <stdexcept>

#include "tests/test_support.h"

using ledger::serve::LedgerServer;
using ledger::serve::ServeOptions;
using ledger::testing::TempDir;

namespace {

std::string startError(ServeOptions options) {
  LedgerServer server(std::move(options), nullptr);
  try {
    server.start();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a usage error: ") + e.what();
  }
  return "started";
}

}  // namespace

TEST_CASE("beyond loopback a token needs TLS, and TLS needs a token or client certificates",
          "[serve]") {
  TempDir dir;
  const std::string token = dir.path("token");
  std::ofstream(token) << "s3cret\n";
  ServeOptions options;
  options.ledgerDir = dir.path("no-ledger");
  options.listen = "192.0.2.1:9480";

  options.tokenFile = token;
  std::string error = startError(options);
  INFO(error);
  CHECK(error.find("TLS") != std::string::npos);
  CHECK(error.find("--tls-cert") != std::string::npos);
  CHECK(error.find("not a usage error") == std::string::npos);

  options.tokenFile.clear();
  error = startError(options);
  CHECK(error.find("TLS") != std::string::npos);

  // TLS alone lets any client in.
  options.tlsCert = dir.path("server.crt");
  options.tlsKey = dir.path("server.key");
  error = startError(options);
  CHECK(error.find("--token-file") != std::string::npos);
  CHECK(error.find("--tls-client-ca") != std::string::npos);
}

TEST_CASE("on loopback plain HTTP and a token are allowed", "[serve]") {
  TempDir dir;
  const std::string token = dir.path("token");
  std::ofstream(token) << "s3cret\n";
  ServeOptions options;
  options.ledgerDir = dir.path("no-ledger");
  options.listen = "127.0.0.1:0";
  options.tokenFile = token;
  // Past the checks: the missing ledger is what stops it.
  CHECK(startError(options).starts_with("not a usage error: "));
}
