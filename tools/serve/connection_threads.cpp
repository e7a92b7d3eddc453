#include "tools/serve/connection_threads.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <system_error>
#include <utility>

#include "tools/serve/accepted_socket.h"

namespace ledger::serve {

namespace {

// The client's address without its port ("" when it cannot be read).
std::string peerAddress(int sock) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return {};
  char text[INET6_ADDRSTRLEN] = {};
  const void* at =
      peer.ss_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&peer)->sin_addr);
  if (::inet_ntop(peer.ss_family, at, text, sizeof text) == nullptr) return {};
  return text;
}

}  // namespace

ConnectionThreads::ConnectionThreads(std::size_t keptThreads, std::size_t maxThreads,
                                     std::chrono::milliseconds idleLimit, std::size_t maxPerAddress)
    : maxThreads_(std::max(maxThreads, keptThreads)),
      maxPerAddress_(maxPerAddress),
      idleLimit_(idleLimit) {
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < keptThreads; ++i) startThread(/*kept=*/true);
}

ConnectionThreads::~ConnectionThreads() { shutdown(); }

std::size_t ConnectionThreads::threads() const {
  std::lock_guard lock(mu_);
  return running_.size();
}

void ConnectionThreads::startThread(bool kept) {
  // The new thread takes mu_ before it reads its own entry, which is
  // filled in while this one still holds it.
  auto self = running_.emplace(running_.end());
  try {
    *self = std::thread([this, self, kept] { serve(self, kept); });
  } catch (const std::system_error&) {
    running_.erase(self);
    throw;
  }
}

std::size_t ConnectionThreads::connectionsFrom(const std::string& address) const {
  std::lock_guard lock(mu_);
  auto it = addresses_.find(address);
  return it == addresses_.end() ? 0 : it->second.open;
}

std::function<void()> ConnectionThreads::admit(int sock, std::function<void()> connection) {
  const std::string address = peerAddress(sock);
  if (address.empty()) return connection;
  {
    std::lock_guard lock(mu_);
    Address& a = addresses_[address];
    if (a.open < maxPerAddress_) {
      ++a.open;
      return [this, address, connection = std::move(connection)] {
        connection();
        std::lock_guard lock(mu_);
        auto it = addresses_.find(address);
        if (it == addresses_.end()) return;
        it->second.refusing = false;
        if (--it->second.open == 0) addresses_.erase(it);
      };
    }
    if (!a.refusing) {
      a.refusing = true;
      spdlog::warn("{} holds {} connections, the most one address may: refusing more (503)",
                   address, a.open);
    }
  }
  // Never waits: a client that does not read its answer loses it.
  static constexpr char kRefusal[] =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 39\r\n"
      "Connection: close\r\n\r\ntoo many connections from this address\n";
  static_cast<void>(::send(sock, kRefusal, sizeof kRefusal - 1, MSG_DONTWAIT | MSG_NOSIGNAL));
  ::shutdown(sock, SHUT_RDWR);
  // cpp-httplib's task closes the socket: it reads nothing and ends at once.
  return connection;
}

void ConnectionThreads::enqueue(std::function<void()> connection) {
  // Taken first, before anything else on this thread can accept.
  const int sock = takeAcceptedSocket();
  if (sock >= 0 && maxPerAddress_ > 0) connection = admit(sock, std::move(connection));
  Threads ended;
  {
    std::lock_guard lock(mu_);
    ended = takeEnded();
    waiting_.push_back(std::move(connection));
    if (idle_ < waiting_.size() && running_.size() < maxThreads_) {
      try {
        startThread(/*kept=*/false);
      } catch (const std::system_error&) {
        // Out of threads for now: a running one takes the connection when
        // it is free.
      }
    }
  }
  ready_.notify_one();
  for (auto& t : ended) t.join();
}

void ConnectionThreads::serve(Threads::iterator self, bool kept) {
  std::unique_lock lock(mu_);
  const auto hasWork = [this] { return stopping_ || !waiting_.empty(); };
  for (;;) {
    ++idle_;
    bool woken = true;
    if (kept) {
      ready_.wait(lock, hasWork);
    } else {
      woken = ready_.wait_for(lock, idleLimit_, hasWork);
    }
    --idle_;
    if (waiting_.empty()) {
      if (stopping_ || !woken) break;
      continue;
    }
    auto connection = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    connection();
    connection = nullptr;  // its socket and captures released off the lock
    lock.lock();
  }
  endedThreads_.splice(endedThreads_.end(), running_, self);
  ended_.notify_all();
}

ConnectionThreads::Threads ConnectionThreads::takeEnded() {
  Threads out;
  out.splice(out.end(), endedThreads_);
  return out;
}

void ConnectionThreads::shutdown() {
  Threads ended;
  {
    std::unique_lock lock(mu_);
    if (shutDown_) return;
    shutDown_ = true;
    stopping_ = true;
    ready_.notify_all();
    ended_.wait(lock, [this] { return running_.empty(); });
    ended = takeEnded();
  }
  for (auto& t : ended) t.join();
}

}  // namespace ledger::serve
