// The threads ledger-serve answers connections on
// (tools/serve/connection_threads.h): a connection that never finishes
// holds its own thread only, so the next one is answered at once; threads
// stop at the ceiling, and what arrives past it waits its turn; shutdown
// runs every waiting connection and ends every thread. One client address
// holds at most its bound; past it a connection is answered 503 at once.
#include "tools/serve/connection_threads.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>

using ledger::serve::ConnectionThreads;
using namespace std::chrono_literals;

namespace {

// Connections that hold their thread until released, as a client that never
// finishes its request holds it until the read times out.
struct Held {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> started{0};
  std::function<void()> connection() {
    return [this] {
      ++started;
      released.wait();
    };
  }
};

}  // namespace

TEST_CASE("a connection that never finishes delays no other", "[serve][threads]") {
  ConnectionThreads threads(/*keptThreads=*/2, /*maxThreads=*/300, 30s);
  Held held;
  for (int i = 0; i < 200; ++i) threads.enqueue(held.connection());
  std::promise<void> answered;
  auto done = answered.get_future();
  threads.enqueue([&] { answered.set_value(); });
  // With a pool of fixed size, this waited for a held thread to be freed.
  CHECK(done.wait_for(5s) == std::future_status::ready);
  CHECK(threads.threads() >= 201);
  held.release.set_value();
  threads.shutdown();
  CHECK(held.started == 200);
  CHECK(threads.threads() == 0);
}

TEST_CASE("past the ceiling connections wait in order and all run", "[serve][threads]") {
  ConnectionThreads threads(/*keptThreads=*/1, /*maxThreads=*/4, 30s);
  Held held;
  for (int i = 0; i < 4; ++i) threads.enqueue(held.connection());
  std::atomic<int> later{0};
  for (int i = 0; i < 10; ++i) threads.enqueue([&] { ++later; });
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (held.started < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  CHECK(held.started == 4);
  CHECK(threads.threads() == 4);
  CHECK(later == 0);  // every thread is held
  held.release.set_value();
  threads.shutdown();
  CHECK(later == 10);
}

TEST_CASE("threads beyond the kept ones end when idle", "[serve][threads]") {
  ConnectionThreads threads(/*keptThreads=*/1, /*maxThreads=*/16, 50ms);
  Held held;
  for (int i = 0; i < 8; ++i) threads.enqueue(held.connection());
  held.release.set_value();
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (threads.threads() > 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  CHECK(threads.threads() == 1);
  std::promise<void> answered;
  auto done = answered.get_future();
  threads.enqueue([&] { answered.set_value(); });  // and new ones still run
  CHECK(done.wait_for(5s) == std::future_status::ready);
}

// The sockets are accepted with accept() on the test's thread, as
// cpp-httplib's loop accepts them before enqueue() (accepted_socket.h).
TEST_CASE("one address holds at most its bound; one more is answered 503", "[serve][threads]") {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 8) == 0);
  socklen_t length = sizeof addr;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length) == 0);
  Held held;
  std::vector<int> clients;
  {
    ConnectionThreads threads(/*keptThreads=*/1, /*maxThreads=*/8, 30s, /*maxPerAddress=*/2);
    for (int i = 0; i < 3; ++i) {
      const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
      clients.push_back(client);
      const int served = ::accept(listener, nullptr, nullptr);
      REQUIRE(served >= 0);
      threads.enqueue([served, connection = held.connection()] {
        connection();
        ::close(served);
      });
    }
    CHECK(threads.connectionsFrom("127.0.0.1") == 2);
    // The third was refused: its client reads the answer, then the end.
    std::string reply;
    char buffer[256];
    timeval wait{5, 0};
    ::setsockopt(clients[2], SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    for (ssize_t n; (n = ::recv(clients[2], buffer, sizeof buffer, 0)) > 0;)
      reply.append(buffer, n);
    CHECK(reply.starts_with("HTTP/1.1 503 "));
    held.release.set_value();
    threads.shutdown();
    CHECK(threads.connectionsFrom("127.0.0.1") == 0);
  }
  for (int c : clients) ::close(c);
  ::close(listener);
}
