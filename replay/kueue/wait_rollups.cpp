#include "replay/kueue/wait_rollups.h"

#include <algorithm>
#include <map>
#include <vector>

#include "ledger/format.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/usage_rollups.h"
#include "replay/kueue/wait_store.h"

namespace ledger::replay {

namespace {

std::int64_t hourFloor(std::int64_t t) {
  std::int64_t q = t / kHourNs;
  if (t % kHourNs < 0) --q;
  return q * kHourNs;
}

std::int64_t hourCeil(std::int64_t t) {
  const std::int64_t f = hourFloor(t);
  return f == t ? t : f + kHourNs;
}

std::int64_t recordTimeOf(const Ledger& ledger, std::uint64_t seq) {
  std::int64_t t = 0;
  if (Status st = ledger.timeOf(seq, &t); !st.isOk()) throw ReplayError(st);
  return t;
}

// Feeds `follower` the records (afterSeq, toSeq].
void replayWaits(const Ledger& ledger, std::uint64_t afterSeq, std::uint64_t toSeq,
                 WaitFollower& follower, const WaitFollower::OnSample& onSample) {
  if (toSeq <= afterSeq) return;
  Status st = ledger.scanProjections(afterSeq + 1, toSeq,
                                     [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
                                       follower.follow(r, onSample);
                                       return true;
                                     });
  if (!st.isOk()) throw ReplayError(st);
}

// The follower after the records before `t`, handing out the admissions
// in [fromNs, t) it replays.
void followUntil(const Ledger& ledger, std::int64_t fromNs, std::int64_t t, WaitFollower& follower,
                 const WaitFollower::OnSample& onSample) {
  const Replayer replayer(ledger);
  const std::uint64_t from = restoreWaitState(ledger, replayer.seqAt(fromNs - 1), follower);
  replayWaits(ledger, from, replayer.seqAt(t - 1), follower, [&](const WaitSample& s) {
    if (s.atNs >= fromNs && s.atNs < t) onSample(s);
  });
}

// The answer from the stored hours inside the period and the stored states
// before its edges; nullopt when nothing usable is stored.
std::optional<WaitsReport> storedWaits(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                                       WaitGrouping by, std::uint64_t* hoursRead) {
  const auto coverage = waitRollupCoverage(ledger);
  if (!coverage) return std::nullopt;
  std::map<std::string, WaitGroup> groups;
  const auto add = [&](const WaitSample& s) {
    groups[waitGroupOf(s, by)].waitsNs.push_back(s.waitNs);
  };
  const std::int64_t a = std::max(hourCeil(fromNs), coverage->startNs);
  const std::int64_t b = std::min(hourFloor(toNs), coverage->endNs);
  WaitFollower follower(by);
  if (a >= b) {
    followUntil(ledger, fromNs, toNs, follower, add);
    return waitsReportOf(fromNs, toNs, by, groups, follower);
  }
  if (fromNs < a) {
    WaitFollower head(by);
    followUntil(ledger, fromNs, a, head, add);
  }
  forEachStoredWaitHour(ledger, a, b, add, hoursRead);
  followUntil(ledger, b, toNs, follower, add);
  return waitsReportOf(fromNs, toNs, by, groups, follower);
}

}  // namespace

std::optional<WaitCoverage> waitRollupCoverage(const Ledger& ledger) {
  const WaitHourKeys keys = storedWaitHourKeys(ledger);
  if (keys.first.empty()) return std::nullopt;
  bool usable = true;
  const std::uint64_t origin = waitOrigin(ledger);
  for (const std::string& key : {keys.first, keys.last}) {
    Status st = ledger.scanUsageRollups(key, key + '\0', [&](std::string_view k, auto words) {
      usable &= waitValueHeader(k, words).usable(origin);
      return false;
    });
    if (!st.isOk()) throw ReplayError(st);
  }
  if (!usable) return std::nullopt;
  return WaitCoverage{format::usageRollupStart(keys.first),
                      format::usageRollupStart(keys.last) + kHourNs};
}

std::optional<std::uint32_t> storedWaitVersion(const Ledger& ledger) {
  // The last hour's: a writer of another version writes hours after it.
  const WaitHourKeys keys = storedWaitHourKeys(ledger);
  if (keys.last.empty()) return std::nullopt;
  std::optional<std::uint32_t> version;
  Status st =
      ledger.scanUsageRollups(keys.last, keys.last + '\0', [&](std::string_view k, auto words) {
        try {
          version = waitValueHeader(k, words).version;
        } catch (const ReplayError&) {
          version = kWaitRollupVersion;  // damaged, not older: verify names it
        }
        return false;
      });
  if (!st.isOk()) throw ReplayError(st);
  return version;
}

WaitsReport waitsFromRollups(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                             WaitGrouping by, std::uint64_t* hoursRead, std::string* problem,
                             const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  try {
    std::uint64_t read = 0;
    if (auto report = storedWaits(ledger, fromNs, toNs, by, &read)) {
      if (hoursRead != nullptr) *hoursRead += read;
      return std::move(*report);
    }
  } catch (const ReplayError& e) {
    if (!e.corrupt()) throw;
    if (problem != nullptr) *problem = e.what();
  }
  return workloadWaits(ledger, fromNs, toNs, by, progress);
}

std::optional<WaitResume> resumeWaits(const Ledger& ledger, std::uint64_t lastSeq,
                                      WaitFollower& follower,
                                      const WaitFollower::OnSample& onStored) {
  if (lastSeq < ledger.firstSeq()) return std::nullopt;
  const auto coverage = waitRollupCoverage(ledger);
  if (!coverage) return std::nullopt;
  // The hours hold every admission before their end only if they start at
  // the first record's hour, as the writer starts them (the history's first,
  // before a cut that carried the state).
  if (coverage->startNs > recordTimeOf(ledger, ledger.firstSeq())) return std::nullopt;
  const std::uint64_t edge = Replayer(ledger).seqAt(coverage->endNs - 1);
  if (edge > lastSeq) return std::nullopt;
  WaitFollower restored = follower;
  const std::uint64_t seq = restoreWaitState(ledger, edge, restored);
  forEachStoredWaitHour(ledger, coverage->startNs, coverage->endNs, onStored);
  follower = std::move(restored);
  return WaitResume{seq, coverage->endNs};
}

namespace {

// One writer pass: the records after the stored state nearest before
// `startNs` (the first hour not stored) up to the ledger's last, storing the
// hours [startNs, endNs) and the states at their seqs.
class WaitRollupPass {
 public:
  WaitRollupPass(Ledger& ledger, std::int64_t startNs, std::int64_t endNs, std::uint64_t stateEvery)
      : ledger_(ledger),
        stateEvery_(stateEvery),
        origin_(waitOrigin(ledger)),
        startNs_(startNs),
        endNs_(endNs),
        hour_(startNs) {
    const Replayer replayer(ledger);
    resumeSeq_ = endNs > startNs ? replayer.seqAt(endNs - 1) : 0;
    fromSeq_ = restoreWaitState(ledger, replayer.seqAt(startNs - 1), follower_);
  }

  std::uint64_t run() {
    const std::uint64_t last = ledger_.lastSeq();
    // Nothing new: no hour completed and no state due.
    std::string lastState;
    if (Status st = ledger_.lastUsageRollup(format::kWaitState, &lastState); !st.isOk())
      throw ReplayError(st);
    const std::uint64_t stored = lastState.empty() ? fromSeq_ : format::heldRecordSeq(lastState);
    if (endNs_ <= startNs_ && last / stateEvery_ * stateEvery_ <= std::max(stored, fromSeq_))
      return 0;
    Status st = ledger_.scanProjections(
        fromSeq_ + 1, last, [&](std::uint64_t seq, schema::ProjectedRecord::Reader r) {
          closeHoursBefore(r.getTimeNs());
          follower_.follow(r, [&](const WaitSample& s) {
            if (s.atNs >= startNs_ && s.atNs < endNs_) samples_.push_back(s);
          });
          if (seq % stateEvery_ == 0 || seq == resumeSeq_) {
            put(format::waitStateKey(seq), encodeWaitState(follower_, origin_));
          }
          return true;
        });
    if (!st.isOk()) throw ReplayError(st);
    closeHoursBefore(endNs_);
    flush();
    return written_;
  }

 private:
  // Stores the hours that end at or before `t` (and before endNs_).
  void closeHoursBefore(std::int64_t t) {
    while (hour_ < endNs_ && hour_ + kHourNs <= t) {
      put(format::waitHourKey(hour_), encodeWaitHour(samples_, origin_));
      samples_.clear();
      hour_ += kHourNs;
    }
  }
  // In order, a batch at a time: an interrupted pass leaves whole hours,
  // and the next goes on from the last.
  void put(std::string key, std::string value) {
    bytes_ += value.size();
    batch_.emplace(std::move(key), std::move(value));
    if (batch_.size() >= 512 || bytes_ >= (16u << 20)) flush();
  }
  void flush() {
    if (Status st = ledger_.putUsageRollups(batch_); !st.isOk()) throw ReplayError(st);
    written_ += batch_.size();
    batch_.clear();
    bytes_ = 0;
  }

  Ledger& ledger_;
  const std::uint64_t stateEvery_;
  const std::uint64_t origin_;
  const std::int64_t startNs_, endNs_;
  std::int64_t hour_;  // the first hour not stored yet
  std::uint64_t resumeSeq_ = 0, fromSeq_ = 0;
  WaitFollower follower_{WaitGrouping::kClusterQueue};
  std::vector<WaitSample> samples_;  // hour_'s so far
  std::map<std::string, std::string> batch_;
  std::size_t bytes_ = 0;
  std::uint64_t written_ = 0;
};

}  // namespace

std::uint64_t writeWaitRollups(Ledger& ledger, std::uint64_t stateEvery) {
  const std::uint64_t last = ledger.lastSeq();
  if (last < ledger.firstSeq()) return 0;
  const std::int64_t headTime = recordTimeOf(ledger, last);
  // The last whole hour that ended before the head, as the usage rollups'
  // (a record appended later may still carry the head's time).
  const std::int64_t endNs = hourFloor(headTime - 1);
  std::int64_t startNs = hourFloor(recordTimeOf(ledger, ledger.firstSeq()));
  try {
    const WaitHourKeys keys = storedWaitHourKeys(ledger);
    if (!keys.last.empty()) {
      // Written before a cut: readers leave them alone, and so does the writer.
      if (!waitRollupCoverage(ledger)) return 0;
      startNs = format::usageRollupStart(keys.last) + kHourNs;
    }
    return WaitRollupPass(ledger, startNs, std::max(startNs, endNs), stateEvery).run();
  } catch (const ReplayError& e) {
    // A damaged stored value: verify names it; the answers read around it.
    if (e.corrupt()) return 0;
    throw;
  }
}

}  // namespace ledger::replay
