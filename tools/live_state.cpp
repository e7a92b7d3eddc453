#include "tools/live_state.h"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "replay/fold/replayer.h"
#include "replay/kueue/report.h"
#include "tools/render/report_metrics.h"

namespace ledger::cli {

LiveState::LiveState(const Ledger& ledger, std::chrono::milliseconds minInterval)
    : ledger_(ledger), minInterval_(minInterval) {
  try {
    replay::FoldOptions fo;
    fo.onRestored = [this](std::uint64_t checkpointSeq) { restoredFrom_ = checkpointSeq; };
    state_ = replay::Replayer(ledger_).foldTo(ledger_.lastSeq(), fo);
    waits_.follow(ledger_, state_.seq());
  } catch (const kj::Exception& e) {
    // Converted here: kj aborts when its exception dies on another thread.
    throw replay::damagedObject(e);
  }
  spdlog::info("live state restored at seq {} from {}", state_.seq(),
               restoredFrom_ ? "the checkpoint at seq " + std::to_string(restoredFrom_)
                             : std::string("the first record"));
}

void LiveState::afterCommit(std::uint64_t, std::uint64_t lastSeq) {
  std::lock_guard lock(mu_);
  if (!ok_ || lastSeq <= state_.seq()) return;
  try {
    replay::Replayer(ledger_).foldInto(state_, lastSeq);
    waits_.follow(ledger_, lastSeq);
    dirty_ = true;
  } catch (const replay::ReplayError& e) {
    ok_ = false;
    spdlog::error("live state: folding up to seq {} failed; metrics stay at seq {}: {}", lastSeq,
                  state_.seq(), e.what());
  } catch (const kj::Exception& e) {
    ok_ = false;
    spdlog::error("live state: folding up to seq {} failed; metrics stay at seq {}: {}", lastSeq,
                  state_.seq(), replay::damagedObject(e).what());
  }
}

void LiveState::render() {
  try {
    const replay::StateReport report = replay::buildReport(state_);
    rendered_ = render::reportToMetrics(report);
    renderedTimeNs_ = report.timeNs;
    if (listener_) listener_(state_, report);
  } catch (const replay::ReplayError& e) {
    ok_ = false;
    spdlog::error("live state: the report at seq {} failed: {}", state_.seq(), e.what());
  } catch (const kj::Exception& e) {
    ok_ = false;
    spdlog::error("live state: the report at seq {} failed: {}", state_.seq(),
                  replay::damagedObject(e).what());
  }
  dirty_ = false;
  renderedAt_ = std::chrono::steady_clock::now();
}

void LiveState::renderIfDue() {
  const auto now = std::chrono::steady_clock::now();
  if (ok_ && (rendered_.empty() || (dirty_ && now - renderedAt_ >= minInterval_))) render();
}

void LiveState::setReportListener(ReportListener listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

void LiveState::refresh() {
  std::lock_guard lock(mu_);
  renderIfDue();
}

std::string LiveState::metricsText(std::int64_t nowNs) {
  std::lock_guard lock(mu_);
  renderIfDue();
  std::string out = rendered_;
  out += waits_.metricsText();
  out +=
      "# HELP ledger_live_state_ok 1 while the live state folds; 0 once a fold or report failed "
      "(the metrics above then stay at ledger_state_seq).\n"
      "# TYPE ledger_live_state_ok gauge\n";
  out += std::string("ledger_live_state_ok ") + (ok_ ? "1" : "0") + "\n";
  if (renderedTimeNs_ != 0) {
    char age[48];
    std::snprintf(age, sizeof age, "%.3f",
                  static_cast<double>(nowNs > renderedTimeNs_ ? nowNs - renderedTimeNs_ : 0) / 1e9);
    out +=
        "# HELP ledger_last_record_age_seconds Seconds since the time of the last record folded "
        "into these metrics (a stale ledger or a stalled writer shows as growth).\n"
        "# TYPE ledger_last_record_age_seconds gauge\n";
    out += std::string("ledger_last_record_age_seconds ") + age + "\n";
  }
  return out;
}

std::uint64_t LiveState::seq() const {
  std::lock_guard lock(mu_);
  return state_.seq();
}

}  // namespace ledger::cli
