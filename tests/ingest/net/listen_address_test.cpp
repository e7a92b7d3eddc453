// Listen addresses (ingest/net/listen_address.h): the forms --listen takes
// for the daemon's health server and `ledger-query serve`, and the hosts
// counted as this machine's own.
#include "ingest/net/listen_address.h"

#include <stdexcept>

#include "tests/test_support.h"

using ledger::net::isLoopbackHost;
using ledger::net::parseListenAddress;

TEST_CASE("a listen address is HOST:PORT, [V6]:PORT or :PORT", "[net]") {
  CHECK(parseListenAddress("127.0.0.1:9480") == std::pair<std::string, int>{"127.0.0.1", 9480});
  CHECK(parseListenAddress("[::1]:8080") == std::pair<std::string, int>{"::1", 8080});
  CHECK(parseListenAddress(":0") == std::pair<std::string, int>{"", 0});
  CHECK(parseListenAddress("host:65535").second == 65535);
  for (const char* bad : {"9480", "host:", "host:65536", "host:-1", "host:80x", "host: 80",
                          "host:+80", "host:000080"}) {
    INFO(bad);
    CHECK_THROWS_AS(parseListenAddress(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH(parseListenAddress("nowhere"), Catch::Contains("--listen 'nowhere'"));
}

TEST_CASE("loopback hosts are 127.0.0.0/8, ::1 and localhost", "[net]") {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"}) {
    INFO(host);
    CHECK(isLoopbackHost(host));
  }
  for (const char* host : {"", "0.0.0.0", "10.0.0.1", "128.0.0.1", "localhost.example", "::"}) {
    INFO(host);
    CHECK_FALSE(isLoopbackHost(host));
  }
}
