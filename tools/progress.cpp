#include "tools/progress.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace ledger::cli {

namespace {

// LEDGER_PROGRESS_AFTER_MS (progress.h); the second when unset or not a
// whole number.
std::chrono::milliseconds delayBeforeShowing() {
  const char* env = std::getenv("LEDGER_PROGRESS_AFTER_MS");
  if (env == nullptr) return std::chrono::seconds(1);
  const std::string_view text(env);
  unsigned ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size()) return std::chrono::seconds(1);
  return std::chrono::milliseconds(ms);
}

}  // namespace

ProgressBar::ProgressBar(std::string label, bool quiet)
    : ProgressBar(std::move(label), stderr, !quiet && isatty(STDERR_FILENO) != 0,
                  [] { return std::chrono::steady_clock::now(); }) {
  after_ = delayBeforeShowing();
}

ProgressBar::ProgressBar(std::string label, std::FILE* out, bool terminal, Clock now)
    : label_(std::move(label)),
      out_(out),
      terminal_(terminal),
      now_(std::move(now)),
      start_(now_()),
      lastDraw_(start_) {}

ProgressBar::~ProgressBar() { done(); }

bool ProgressBar::due(bool last) {
  if (!terminal_) return false;
  const auto now = now_();
  if (now - start_ < after_) return false;
  if (shown_ && now - lastDraw_ < std::chrono::milliseconds(100) && !last) return false;
  lastDraw_ = now;
  shown_ = true;
  return true;
}

void ProgressBar::count(std::uint64_t done) {
  if (!due(false)) return;
  const double seconds = std::chrono::duration<double>(lastDraw_ - start_).count();
  std::fprintf(out_, "\r%s %llu records (%.0f/s)\033[K", label_.c_str(),
               static_cast<unsigned long long>(done), static_cast<double>(done) / seconds);
  std::fflush(out_);
}

void ProgressBar::update(std::uint64_t done, std::uint64_t total) {
  if (total == 0 || !due(done >= total)) return;
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
