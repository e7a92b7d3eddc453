// The threads ledger-serve answers connections on: every accepted
// connection gets a thread of its own at once.
//
// A connection holds its thread for as long as its client takes to send a
// request (up to the server's read timeout per read) and then for as long
// as it stays open between requests. With a fixed pool, as many clients
// that never finish their headers as the pool has threads left every other
// client waiting behind them (slowloris). Here threads are started as
// connections arrive, up to `maxThreads` at once, so that slow clients
// delay no one until they hold that many connections; the first
// `keptThreads` stay for the server's life, the others end after
// `idleLimit` without a connection. Past `maxThreads`, new connections wait
// in arrival order for a thread; the accept loop itself never waits.
//
// Per client address, at most `maxPerAddress` connections at once (0: no
// bound), counted from when they are accepted until they close, so that one
// address cannot hold every thread while others wait: a connection past it
// is answered 503 and closed at once (the address is read from the socket
// the listening loop accepted, accepted_socket.h).
//
// Implements cpp-httplib's TaskQueue: the server calls enqueue() from its
// accept thread, one connection per call, and shutdown() once after its
// accept loop ended. shutdown() lets every queued connection run, then joins
// every thread; the destructor calls it. Thread-safe. Errors: a thread that
// cannot be started leaves its connection queued for a running thread (the
// kept threads always run); nothing is thrown.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace ledger::serve {

class ConnectionThreads : public httplib::TaskQueue {
 public:
  ConnectionThreads(std::size_t keptThreads, std::size_t maxThreads,
                    std::chrono::milliseconds idleLimit, std::size_t maxPerAddress = 0);
  ~ConnectionThreads() override;
  ConnectionThreads(const ConnectionThreads&) = delete;
  ConnectionThreads& operator=(const ConnectionThreads&) = delete;

  void enqueue(std::function<void()> connection) override;
  void shutdown() override;

  // Threads started and not yet ended.
  std::size_t threads() const;
  // Connections open from `address` (as getpeername gives it, without port).
  std::size_t connectionsFrom(const std::string& address) const;

 private:
  using Threads = std::list<std::thread>;
  void startThread(bool kept);  // under mu_
  void serve(Threads::iterator self, bool kept);
  Threads takeEnded();  // under mu_
  // The connection on `sock`, counted against its address; a refused one
  // is answered and shut down, and the returned task only closes it.
  std::function<void()> admit(int sock, std::function<void()> connection);

  const std::size_t maxThreads_;
  const std::size_t maxPerAddress_;
  const std::chrono::milliseconds idleLimit_;
  mutable std::mutex mu_;
  std::condition_variable ready_;  // a connection waits, or stopping_
  std::condition_variable ended_;  // a thread moved itself to ended_
  std::deque<std::function<void()>> waiting_;
  Threads running_, endedThreads_;
  std::size_t idle_ = 0;
  struct Address {
    std::size_t open = 0;
    bool refusing = false;  // logged once while it stays at the bound
  };
  std::map<std::string, Address> addresses_;
  bool stopping_ = false;
  bool shutDown_ = false;
};

}  // namespace ledger::serve
