#include "tools/progress.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace ledger::cli {

ProgressBar::ProgressBar(std::string label)
    : ProgressBar(std::move(label), stderr, isatty(STDERR_FILENO) != 0,
                  [] { return std::chrono::steady_clock::now(); }) {}

ProgressBar::ProgressBar(std::string label, std::FILE* out, bool terminal, Clock now)
    : label_(std::move(label)),
      out_(out),
      terminal_(terminal),
      now_(std::move(now)),
      start_(now_()),
      lastDraw_(start_) {}

ProgressBar::~ProgressBar() { done(); }

void ProgressBar::update(std::uint64_t done, std::uint64_t total) {
  if (!terminal_ || total == 0) return;
  const auto now = now_();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (shown_ && now - lastDraw_ < std::chrono::milliseconds(100) && done < total) return;
  lastDraw_ = now;
  shown_ = true;
  constexpr int kWidth = 40;
  const double frac = static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(frac * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(out_, "\r%s [%s] %3d%% %llu/%llu records", label_.c_str(), bar.c_str(),
               static_cast<int>(frac * 100), static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total));
  std::fflush(out_);
}

void ProgressBar::done() {
  if (shown_) {
    std::fprintf(out_, "\r\033[K");
    std::fflush(out_);
    shown_ = false;
  }
}

void warnBadCheckpoint(std::uint64_t seq, const std::string& why) {
  spdlog::warn("ignoring checkpoint at seq {}: {} (run `ledger-replay verify`)", seq, why);
}

}  // namespace ledger::cli
