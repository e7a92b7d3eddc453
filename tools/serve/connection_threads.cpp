#include "tools/serve/connection_threads.h"

#include <system_error>
#include <utility>

namespace ledger::serve {

ConnectionThreads::ConnectionThreads(std::size_t keptThreads, std::size_t maxThreads,
                                     std::chrono::milliseconds idleLimit)
    : maxThreads_(std::max(maxThreads, keptThreads)), idleLimit_(idleLimit) {
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

void ConnectionThreads::enqueue(std::function<void()> connection) {
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
