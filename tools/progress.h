// A progress bar on stderr for long replays: shown only when stderr is a
// terminal and the work has run for more than a second; erased when done.
//
// Not thread-safe; one bar per command. Never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace ledger::cli {

class ProgressBar {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  explicit ProgressBar(std::string label);
  // For tests: draws on `out` (not owned; must outlive the bar) as if it
  // were a terminal when `terminal`, reading time from `now`.
  ProgressBar(std::string label, std::FILE* out, bool terminal, Clock now);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::uint64_t done, std::uint64_t total);
  std::function<void(std::uint64_t, std::uint64_t)> callback() {
    return [this](std::uint64_t d, std::uint64_t t) { update(d, t); };
  }
  void done();

 private:
  std::string label_;
  std::FILE* out_;
  bool terminal_;
  Clock now_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastDraw_;
};

// Logs a warning about a checkpoint the Replayer had to skip.
void warnBadCheckpoint(std::uint64_t seq, const std::string& why);

}  // namespace ledger::cli
