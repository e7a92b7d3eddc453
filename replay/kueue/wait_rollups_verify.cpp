// verifyWaitRollups (wait_rollups.h): the stored wait data against one
// fresh pass of the wait follower over the whole history.
#include <map>
#include <optional>
#include <vector>

#include "ledger/format.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/usage_rollups.h"
#include "replay/kueue/wait_rollups.h"
#include "replay/kueue/wait_store.h"

namespace ledger::replay {

namespace {

// The stored values, bytes by key, those this ledger's readers use.
struct StoredWaitData {
  std::map<std::int64_t, std::string> hours;    // by start
  std::map<std::uint64_t, std::string> states;  // by seq
};

// Reads every stored value; a value that does not decode or fails its
// checksum is named in `v`.
StoredWaitData readStoredWaitData(const Ledger& ledger, std::uint64_t origin,
                                  WaitRollupVerification& v) {
  StoredWaitData out;
  std::string current;
  try {
    Status st = ledger.scanUsageRollups(
        std::string(1, format::kWaitState), std::string(1, format::kWaitHour + 1),
        [&](std::string_view key, kj::ArrayPtr<const capnp::word> words) {
          current = std::string(key);
          if (key.size() != format::kUsageRollupKeySize)
            throw ReplayError("the key is malformed", true);
          if (!waitValueHeader(key, words).usable(origin)) {
            v.notRead = true;
            return true;
          }
          auto bytes = words.asBytes();
          std::string value(bytes.begin(), bytes.end());
          if (key[0] == format::kWaitHour) {
            out.hours.emplace(format::usageRollupStart(key), std::move(value));
          } else {
            out.states.emplace(format::heldRecordSeq(key), std::move(value));
          }
          return true;
        });
    if (!st.isOk()) {
      v.firstBad = "stored wait data";
      v.problem = st.toString();
    }
  } catch (const ReplayError& e) {
    v.firstBad = current.empty() ? "stored wait data" : describeWaitKey(current);
    v.problem = e.what();
  }
  return out;
}

std::int64_t hourStartOf(std::int64_t t) {
  const std::int64_t into = t % kHourNs;
  return t - (into < 0 ? into + kHourNs : into);
}

void failAt(WaitRollupVerification& v, const std::string& key, const std::string& problem) {
  if (!v.firstBad.empty()) return;
  v.firstBad = describeWaitKey(key);
  v.problem = problem;
}

}  // namespace

WaitRollupVerification verifyWaitRollups(const Ledger& ledger, std::uint64_t stateEvery) {
  WaitRollupVerification v;
  const std::uint64_t origin = waitOrigin(ledger);
  StoredWaitData stored = readStoredWaitData(ledger, origin, v);
  if (!v.firstBad.empty() || (stored.hours.empty() && stored.states.empty())) return v;
  const std::uint64_t first = ledger.firstSeq(), last = ledger.lastSeq();
  std::int64_t headTime = 0, firstTime = 0;
  if (last >= first) {
    if (Status st = ledger.timeOf(last, &headTime); !st.isOk()) throw ReplayError(st);
    if (Status st = ledger.timeOf(first, &firstTime); !st.isOk()) throw ReplayError(st);
  }
  // A cut that carried the follower's state: the pass goes on from it, and
  // the hours up to the cut's time hold admissions of archived records.
  WaitFollower follower(WaitGrouping::kClusterQueue);
  std::optional<std::int64_t> carriedTo;
  if (const auto cut = ledger.archiveCut(); cut && origin != first) {
    restoreWaitState(ledger, cut->seq, follower);
    stored.states.erase(cut->seq);
    ++v.carried;
    carriedTo = cut->timeNs;
  }
  // What the writer stores: hours from the first record's to the last
  // whole one before the head, and a state at every kWaitStateEvery seq up
  // to the last one stored.
  const std::int64_t coverableEnd = hourStartOf(headTime - 1);
  std::map<std::int64_t, std::vector<WaitSample>> fresh;
  const std::int64_t hoursFrom = stored.hours.empty() ? 0 : stored.hours.begin()->first;
  const std::int64_t hoursTo = stored.hours.empty() ? 0 : stored.hours.rbegin()->first + kHourNs;
  const std::uint64_t statesTo = stored.states.empty() ? 0 : stored.states.rbegin()->first;
  if (last >= first) {
    Status st = ledger.scanProjections(
        first, last, [&](std::uint64_t seq, schema::ProjectedRecord::Reader r) {
          follower.follow(r, [&](const WaitSample& s) {
            if (s.atNs >= hoursFrom && s.atNs < hoursTo) fresh[hourStartOf(s.atNs)].push_back(s);
          });
          if (seq > statesTo || !v.firstBad.empty()) return true;
          const std::string key = format::waitStateKey(seq);
          auto it = stored.states.find(seq);
          if (it != stored.states.end()) {
            if (it->second != encodeWaitState(follower, origin)) {
              failAt(v, key, "differs from a fresh pass over the log");
            } else {
              ++v.checked;
            }
            stored.states.erase(it);
          } else if (seq % stateEvery == 0) {
            failAt(v, key, "missing");
          }
          return true;
        });
    if (!st.isOk()) throw ReplayError(st);
  }
  if (!v.firstBad.empty()) return v;
  if (!stored.states.empty()) {
    failAt(v, format::waitStateKey(stored.states.begin()->first), "stored after the last record");
    return v;
  }
  for (std::int64_t h = hoursFrom; h < hoursTo && v.firstBad.empty(); h += kHourNs) {
    const std::string key = format::waitHourKey(h);
    auto it = stored.hours.find(h);
    if (carriedTo && h <= *carriedTo) {
      if (it == stored.hours.end()) failAt(v, key, "missing");
      ++v.carried;
    } else if (!carriedTo && h < hourStartOf(firstTime)) {
      // (After a cut, the hours between its time and the first record's are
      // stored empty, as the fresh pass finds them.)
      failAt(v, key, "stored before the hour of the first record");
    } else if (h + kHourNs > coverableEnd) {
      failAt(v, key, "stored past the last whole hour before the head");
    } else if (it == stored.hours.end()) {
      failAt(v, key, "missing");
    } else if (it->second != encodeWaitHour(fresh[h], origin)) {
      failAt(v, key, "differs from a fresh pass over the log");
    } else {
      ++v.checked;
    }
  }
  return v;
}

}  // namespace ledger::replay
