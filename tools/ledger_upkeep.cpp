#include "tools/ledger_upkeep.h"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "replay/fold/checkpoints.h"
#include "replay/kueue/usage_rollups.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::cli {

namespace {

std::uint64_t newestCheckpoint(const Ledger& ledger) {
  std::uint64_t seq = 0;
  std::string bytes;
  Status st = ledger.checkpointAtOrBefore(UINT64_MAX, &seq, &bytes);
  if (!st.isOk()) throw replay::ReplayError(st);
  return seq;
}

void gauge(std::string& out, const char* name, const char* help, const std::string& value) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " +
         value + "\n";
}

}  // namespace

LedgerUpkeep::LedgerUpkeep(Ledger& ledger, UpkeepOptions options)
    : ledger_(ledger), options_(options) {}

LedgerUpkeep::~LedgerUpkeep() { stop(); }

void LedgerUpkeep::start() {
  {
    std::lock_guard lock(mu_);
    committed_ = ledger_.lastSeq();
    lastVerifyNs_ = nowNs();
    try {
      checkpointSeq_ = newestCheckpoint(ledger_);
    } catch (const replay::ReplayError& e) {
      spdlog::error("upkeep: reading the newest checkpoint failed: {}", e.what());
    }
    checkpointBase_ = checkpointSeq_;
    archiveDue_ = options_.retain.count() > 0;
    if (const auto cut = ledger_.archiveCut()) {
      archivedSeq_ = cut->seq;
      archivedTimeNs_ = cut->timeNs;
    }
  }
  if (options_.checkpointEvery == 0 && options_.verifyEvery.count() <= 0 && !archiveDue_) return;
  thread_ = std::thread([this] { run(); });
}

void LedgerUpkeep::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LedgerUpkeep::afterCommit(std::uint64_t lastSeq) {
  {
    std::lock_guard lock(mu_);
    committed_ = std::max(committed_, lastSeq);
  }
  wake_.notify_all();
}

void LedgerUpkeep::run() {
  using Clock = std::chrono::steady_clock;
  const bool verifying = options_.verifyEvery.count() > 0;
  auto nextVerify = Clock::now();  // the first check at start
  std::unique_lock lock(mu_);
  for (;;) {
    auto checkpointsDue = [&] {
      return options_.checkpointEvery > 0 &&
             committed_ >= checkpointBase_ + options_.checkpointEvery;
    };
    auto woken = [&] { return stopping_ || checkpointsDue() || archiveDue_; };
    if (verifying) {
      wake_.wait_until(lock, nextVerify, woken);
    } else {
      wake_.wait(lock, woken);
    }
    if (stopping_) return;
    if (checkpointsDue()) {
      lock.unlock();
      writeDerived();
      lock.lock();
      archiveDue_ = options_.retain.count() > 0;
    }
    if (archiveDue_ && !stopping_) {
      archiveDue_ = false;
      lock.unlock();
      archiveOld();
      lock.lock();
    }
    if (verifying && !stopping_ && Clock::now() >= nextVerify) {
      lock.unlock();
      verify();
      lock.lock();
      nextVerify = Clock::now() + options_.verifyEvery;
    }
  }
}

void LedgerUpkeep::writeDerived() {
  std::uint64_t written = 0, hours = 0, newest = 0;
  bool ok = false;
  try {
    written = replay::writeCheckpoints(ledger_, options_.checkpointEvery);
    newest = newestCheckpoint(ledger_);
    hours = replay::writeUsageRollups(ledger_);
    ok = true;
  } catch (const replay::ReplayError& e) {
    spdlog::error("upkeep: writing checkpoints and usage rollups failed (recording goes on): {}",
                  e.what());
  } catch (const kj::Exception& e) {
    spdlog::error("upkeep: writing checkpoints and usage rollups failed (recording goes on): {}",
                  replay::damagedObject(e).what());
  } catch (const std::exception& e) {
    spdlog::error("upkeep: writing checkpoints and usage rollups failed (recording goes on): {}",
                  e.what());
  }
  std::lock_guard lock(mu_);
  if (newest != 0) checkpointSeq_ = newest;
  // After a failure, not again before another interval of records: a
  // persistent fault (a damaged record) would otherwise be retried at once.
  checkpointBase_ = ok ? checkpointSeq_ : std::max(checkpointSeq_, committed_);
  if (ok && (written > 0 || hours > 0)) {
    spdlog::debug("upkeep: wrote {} checkpoint(s) (newest at seq {}) and {} usage bucket(s)",
                  written, checkpointSeq_, hours);
  }
}

void LedgerUpkeep::archiveOld() {
  // Whole hours: the cut's hour would otherwise be partial, answered
  // neither live nor from the rollups (docs/reference.md, "Archives and the
  // cut").
  const std::int64_t beforeNs = (nowNs() - static_cast<std::int64_t>(options_.retain.count())) /
                                replay::kHourNs * replay::kHourNs;
  ArchiveRequest request = options_.archive;
  request.before = formatRfc3339(beforeNs);
  try {
    const ArchiveOutcome outcome = archiveBefore(ledger_, beforeNs, request);
    if (outcome.cut.seq == 0) {
      spdlog::debug("upkeep: retention: {}", outcome.none);
      return;
    }
    const std::uint64_t newest = newestCheckpoint(ledger_);
    spdlog::info("upkeep: archived records 1..{} (before {}) to {}; the ledger holds {}..{}",
                 outcome.cut.seq, request.before, outcome.cut.archiveDir, outcome.cut.seq + 1,
                 ledger_.lastSeq());
    std::lock_guard lock(mu_);
    archivedSeq_ = outcome.cut.seq;
    archivedTimeNs_ = outcome.cut.timeNs;
    checkpointSeq_ = newest;
    checkpointBase_ = std::max(checkpointBase_, newest);
    // The chain check goes on from the link: the archive's copy of the
    // records before it reached the hash the ledger stored there.
    if (verified_.seq < outcome.cut.seq) {
      verified_ = ChainPoint{outcome.cut.seq, outcome.cut.hash, outcome.cut.timeNs};
    }
  } catch (const kj::Exception& e) {
    spdlog::error("upkeep: archiving the records before {} failed (recording goes on): {}",
                  request.before, replay::damagedObject(e).what());
  } catch (const std::exception& e) {
    spdlog::error("upkeep: archiving the records before {} failed (recording goes on): {}",
                  request.before, e.what());
  }
}

void LedgerUpkeep::verify() {
  ChainPoint at;
  {
    std::lock_guard lock(mu_);
    at = verified_;
  }
  const std::uint64_t to = ledger_.lastSeq();
  VerifyReport report;
  Status st = Status::ok();
  // In slices, so that a stop does not wait for a whole first check.
  while (st.isOk() && at.seq < to && report.ok()) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    const std::uint64_t end =
        std::min(to, at.seq + std::max<std::uint64_t>(options_.verifySlice, 1));
    st = verifyChain(ledger_, at, end, &report, &at);
  }
  Verification statement;
  statement.scope = VerificationScope::kChain;
  statement.upToSeq = at.seq;
  {
    std::lock_guard lock(mu_);
    const bool wasOk = verifyOk_;
    verified_ = at;
    lastVerifyNs_ = nowNs();
    statement.timeNs = lastVerifyNs_;
    ++verifications_;
    if (!st.isOk()) {
      verifyOk_ = false;
      statement.problem = "the chain check could not read the ledger after seq " +
                          std::to_string(at.seq) + ": " + st.toString();
      spdlog::error("upkeep: {}", statement.problem);
    } else if (!report.ok()) {
      verifyOk_ = false;
      statement.failedSeq = report.firstBadSeq;
      statement.upToSeq = report.firstBadSeq;
      statement.problem = report.problem;
      spdlog::error(
          "upkeep: the ledger fails its chain check at seq {}: {} (records up to seq {} are "
          "sound; `ledger-replay verify` checks the whole ledger)",
          report.firstBadSeq, report.problem, at.seq);
    } else {
      verifyOk_ = true;
      if (!wasOk) spdlog::info("upkeep: the chain checks sound again up to seq {}", at.seq);
    }
    statement.ok = verifyOk_;
  }
  // Beside the ledger, for every answer's proof line (verification_record.h);
  // outside mu_, since it waits for the disk.
  if (Status rec = recordVerification(ledger_.directory(), statement); !rec.isOk()) {
    spdlog::error("upkeep: recording the chain check's result failed: {}", rec.toString());
  }
}

std::string LedgerUpkeep::metricsText(std::int64_t nowNs) const {
  std::lock_guard lock(mu_);
  std::string out;
  if (options_.checkpointEvery > 0) {
    gauge(out, "ledger_checkpoint_seq",
          "The seq of the newest checkpoint (0: none); a restart folds the records after it.",
          std::to_string(checkpointSeq_));
  }
  if (options_.verifyEvery.count() > 0) {
    gauge(out, "ledger_verify_ok",
          "1 while the background chain check finds the ledger sound; 0 once it found a break "
          "(logged with the first bad seq) or could not read the ledger.",
          verifyOk_ ? "1" : "0");
    gauge(out, "ledger_verified_seq", "The last record the background chain check found sound.",
          std::to_string(verified_.seq));
    char age[48];
    std::snprintf(age, sizeof age, "%.3f",
                  static_cast<double>(std::max<std::int64_t>(nowNs - lastVerifyNs_, 0)) / 1e9);
    gauge(out, "ledger_last_verify_age_seconds",
          "Seconds since the last background chain check ended (since the daemon started, "
          "before the first ended).",
          age);
  }
  if (options_.retain.count() > 0) {
    gauge(out, "ledger_archive_last_seq",
          "The last record moved to the archive (--retain); 0: the ledger was never cut.",
          std::to_string(archivedSeq_));
    gauge(out, "ledger_archive_last_time_seconds",
          "The time (Unix seconds) of the last record moved to the archive; 0: never cut.",
          std::to_string(archivedTimeNs_ / 1000000000));
  }
  return out;
}

std::uint64_t LedgerUpkeep::archivedSeq() const {
  std::lock_guard lock(mu_);
  return archivedSeq_;
}

std::uint64_t LedgerUpkeep::checkpointSeq() const {
  std::lock_guard lock(mu_);
  return checkpointSeq_;
}

std::uint64_t LedgerUpkeep::verifiedSeq() const {
  std::lock_guard lock(mu_);
  return verified_.seq;
}

bool LedgerUpkeep::verifyOk() const {
  std::lock_guard lock(mu_);
  return verifyOk_;
}

std::uint64_t LedgerUpkeep::verifications() const {
  std::lock_guard lock(mu_);
  return verifications_;
}

}  // namespace ledger::cli
