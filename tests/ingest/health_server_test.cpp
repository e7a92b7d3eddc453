// The sidecar's probe endpoints stay reachable when clients misbehave: the
// kubelet's probes time out after a second, and the sidecar's readiness is
// part of Kueue's Pod's, so a few idle connections from any Pod must not
// take Kueue out of Ready. A second daemon cannot bind the same port.
#include "ingest/kube/health_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

namespace ledger::kube {
namespace {

// A TCP connection that sends nothing.
int idleConnection(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

}  // namespace

TEST_CASE("health server: probes are answered while idle connections are open", "[health]") {
  Metrics metrics;
  HealthServer server(metrics, [] { return true; });
  server.start("127.0.0.1:0");
  std::vector<int> idle;
  for (int i = 0; i < 24; ++i) idle.push_back(idleConnection(server.port()));
  httplib::Client client("127.0.0.1", server.port());
  client.set_connection_timeout(std::chrono::seconds(1));
  client.set_read_timeout(std::chrono::seconds(1));
  // Within the kubelet's default probe timeout, repeatedly.
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto res = client.Get("/healthz");
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(took < std::chrono::seconds(1));
  }
  for (int fd : idle) ::close(fd);
  server.stop();
}

TEST_CASE("health server: a port in use is refused", "[health]") {
  Metrics metrics;
  HealthServer first(metrics, [] { return true; });
  first.start("127.0.0.1:0");
  HealthServer second(metrics, [] { return true; });
  CHECK_THROWS_WITH(second.start("127.0.0.1:" + std::to_string(first.port())),
                    Catch::Contains("cannot bind"));
  first.stop();
}

}  // namespace ledger::kube
