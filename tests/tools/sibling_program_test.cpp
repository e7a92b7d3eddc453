// `ledger-query serve` hands over to ledger-serve, found beside ledger-query
// (tools/sibling_program.h): the flags it forwards, and a clear error when
// ledger-serve is not there. Runs a copy of the real ledger-query ($LEDGER_QUERY)
// in a directory of its own.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/test_support.h"

using namespace ledger::testing;

namespace {

// A copy of ledger-query in `dir`, alone.
std::string copyOfLedgerQuery(const TempDir& dir) {
  const char* query = std::getenv("LEDGER_QUERY");
  REQUIRE(query != nullptr);
  const std::string copy = dir.path("ledger-query");
  std::filesystem::copy_file(query, copy);
  return copy;
}

}  // namespace

TEST_CASE("ledger-query serve runs ledger-serve from beside it, with the serve flags",
          "[cli][serve]") {
  TempDir dir;
  const std::string query = copyOfLedgerQuery(dir);

  SECTION("not installed: exit 1, naming where it was looked for") {
    const CommandRun run = runCommand(query + " serve --ledger " + dir.path("l"));
    CHECK(run.exitCode == 1);
    CHECK_THAT(run.output, Catch::Contains(dir.path("ledger-serve")));
    CHECK_THAT(run.output, Catch::Contains("installed beside"));
  }
  SECTION("installed: it replaces ledger-query with the flags given") {
    // A stand-in that prints how it was called.
    const std::string serve = dir.path("ledger-serve");
    std::ofstream(serve) << "#!/bin/sh\necho \"$0 $*\"\nexit 7\n";
    REQUIRE(::chmod(serve.c_str(), 0755) == 0);
    const CommandRun run =
        runCommand(query + " serve --ledger " + dir.path("l") +
                   " --listen 127.0.0.1:0 --token-file " + dir.path("token") +
                   " --tls-cert c.pem --tls-key k.pem --tls-client-ca ca.pem --log-format json");
    CHECK(run.exitCode == 7);
    CHECK(run.output == serve + " --listen 127.0.0.1:0 --log-format json --ledger " +
                            dir.path("l") + " --token-file " + dir.path("token") +
                            " --tls-cert c.pem --tls-key k.pem --tls-client-ca ca.pem\n");
  }
}
