// Answers kept between requests, by a key that fixes them: a moment in the
// past (its seq, and its time for the AGE column) cannot change, so an
// answer about it is computed once and shared, and concurrent requests for
// the same key wait for the one computation instead of repeating it (kubectl
// users, and a page of the web view, ask one moment many times).
//
// Bounded by entries and bytes; least recently used first out. Thread-safe.
// Errors: an exception thrown by `compute` reaches every waiter of that
// computation and nothing is kept.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>

namespace ledger::serve {

class AnswerCache {
 public:
  AnswerCache(std::size_t maxEntries, std::size_t maxBytes)
      : maxEntries_(maxEntries), maxBytes_(maxBytes) {}

  using Answer = std::shared_ptr<const std::string>;
  Answer get(const std::string& key, const std::function<std::string()>& compute);

 private:
  struct Entry {
    std::string key;
    std::shared_future<Answer> answer;
    std::size_t bytes = 0;  // 0 while computing
  };
  void evict();  // under mu_

  std::size_t maxEntries_, maxBytes_;
  std::size_t bytes_ = 0;
  std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace ledger::serve
