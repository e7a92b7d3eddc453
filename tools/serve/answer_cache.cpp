#include "tools/serve/answer_cache.h"

namespace ledger::serve {

AnswerCache::Answer AnswerCache::get(const std::string& key,
                                     const std::function<std::string()>& compute) {
  std::promise<Answer> promise;
  std::shared_future<Answer> future;
  {
    std::lock_guard lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key == key) {
        entries_.splice(entries_.begin(), entries_, it);
        future = it->answer;
        break;
      }
    }
    // Found: computed, or being computed by another request, waited for
    // outside the lock. Else this request computes it.
    if (!future.valid()) entries_.push_front({key, promise.get_future().share(), 0});
  }
  if (future.valid()) return future.get();
  try {
    auto answer = std::make_shared<const std::string>(compute());
    promise.set_value(answer);
    std::lock_guard lock(mu_);
    for (auto& e : entries_) {
      if (e.key == key && e.bytes == 0) {
        e.bytes = answer->size() + key.size();
        bytes_ += e.bytes;
        break;
      }
    }
    evict();
    return answer;
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard lock(mu_);
    entries_.remove_if([&](const Entry& e) { return e.key == key && e.bytes == 0; });
    throw;
  }
}

void AnswerCache::evict() {
  while (!entries_.empty() && (entries_.size() > maxEntries_ || bytes_ > maxBytes_)) {
    // Evict from the back; an entry still computing (bytes 0) is skipped.
    auto it = std::prev(entries_.end());
    while (it != entries_.begin() && it->bytes == 0) --it;
    if (it->bytes == 0) return;
    bytes_ -= it->bytes;
    entries_.erase(it);
  }
}

}  // namespace ledger::serve
