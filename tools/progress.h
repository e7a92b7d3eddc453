// A progress bar on stderr for long work (replays, ingest): shown only when
// stderr is a terminal, the work has run for more than a second and the
// user did not ask for quiet (--quiet); erased when done.
//
// LEDGER_PROGRESS_AFTER_MS, when set to a whole number, replaces the
// second: the progress-terminal suite sets 0 so that a small ledger's
// rebuild or checkpoint shows its bar.
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

  explicit ProgressBar(std::string label, bool quiet = false);
  // For tests: draws on `out` (not owned; must outlive the bar) as if it
  // were a terminal when `terminal`, reading time from `now`.
  ProgressBar(std::string label, std::FILE* out, bool terminal, Clock now);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::uint64_t done, std::uint64_t total);
  // For work whose total is unknown (ingest from stdin): the count so far
  // and the rate.
  void count(std::uint64_t done);
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
  // Whether to draw now: on a terminal, after a second, at most every 100 ms
  // (`last`: the final update, drawn whatever the interval).
  bool due(bool last);
  std::chrono::milliseconds after_{1000};
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastDraw_;
};

// Logs a warning about a checkpoint the Replayer had to skip.
void warnBadCheckpoint(std::uint64_t seq, const std::string& why);

}  // namespace ledger::cli
