// The sidecar's probe endpoints stay reachable when clients misbehave: the
// kubelet's probes time out after a second, and the sidecar's readiness is
// part of Kueue's Pod's, so a few idle connections from any Pod must not
// take Kueue out of Ready. A second daemon cannot bind the same port.
// /metrics ends with the optional provider's text (the live state's).
#include "ingest/kube/health_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
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
  // Open, not arriving: Debian's cpp-httplib listens with a backlog of 5,
  // and a probe that lands while the burst above still fills the accept
  // queue waits for a SYN retransmission (1 s), which is not what is tested.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
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

TEST_CASE("health server: /metrics appends the provider's text, asked on each scrape", "[health]") {
  Metrics metrics;
  metrics.committed(7);
  // Written on the server's threads.
  std::atomic<int> asked = 0;
  std::atomic<std::int64_t> askedAt = 0;
  HealthServer server(
      metrics, [] { return true; },
      [&](std::int64_t nowNs) {
        ++asked;
        askedAt = nowNs;
        return std::string("# HELP extra_metric E.\n# TYPE extra_metric gauge\nextra_metric 1\n");
      });
  server.start("127.0.0.1:0");
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(std::chrono::seconds(5));
  for (int i = 1; i <= 2; ++i) {
    auto res = client.Get("/metrics");
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->body.find("ledger_head_seq 7\n") != std::string::npos);
    CHECK(res->body.size() > std::string("extra_metric 1\n").size());
    CHECK(res->body.substr(res->body.size() - 15) == "extra_metric 1\n");
    CHECK(asked == i);
  }
  CHECK(askedAt > 0);
  server.stop();
}

}  // namespace ledger::kube
