// Capped exponential backoff with jitter, for reconnecting watches.
//
// The n-th consecutive failure waits a random time in [d/2, d] where
// d = min(initial * 2^n, max): the jitter spreads reconnects of many clients
// (and of one client's several watches) so they do not hit the API server in
// step. reset() after a success starts over from `initial`.
//
// Value type; not thread-safe (one per watch loop). Never throws.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace ledger::kube {

class Backoff {
 public:
  using Duration = std::chrono::milliseconds;

  Backoff(Duration initial, Duration max, std::uint64_t seed = std::random_device{}())
      : initial_(std::max(initial, Duration(1))), max_(std::max(max, initial_)), rng_(seed) {}

  // The wait before the next attempt; each call doubles the ceiling up to max.
  Duration next() {
    const auto ceiling = current();
    if (failures_ < 62) ++failures_;
    std::uniform_int_distribution<std::int64_t> pick(ceiling.count() / 2, ceiling.count());
    return Duration(pick(rng_));
  }

  // The ceiling the next call to next() draws under.
  Duration current() const {
    Duration d = initial_;
    for (int i = 0; i < failures_ && d < max_; ++i) d *= 2;
    return std::min(d, max_);
  }

  void reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  Duration initial_;
  Duration max_;
  int failures_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace ledger::kube
