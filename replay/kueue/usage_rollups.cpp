#include "replay/kueue/usage_rollups.h"

#include <chrono>
#include <map>
#include <optional>

#include <capnp/serialize.h>

#include "ledger/format.h"
#include "replay/kueue/held_record.h"
#include "replay/kueue/wait_rollups.h"
#include "schema/k8s/rfc3339.h"
#include "schema/rollup.capnp.h"

namespace ledger::replay {

namespace {

constexpr std::int64_t kDayNs = 24 * kHourNs;
constexpr char kHour = 'h';
constexpr char kDay = 'd';
constexpr char kMonth = 'm';
// The buckets' keys sort between these; the held levels' after them.
constexpr char kBucketsFirst = kDay;
constexpr char kBucketsLast = kMonth;
static_assert(kBucketsFirst < kHour && kHour < kBucketsLast && kBucketsLast < format::kHeldChanges);

std::int64_t floorTo(std::int64_t t, std::int64_t unit) {
  std::int64_t q = t / unit;
  if (t % unit < 0) --q;
  return q * unit;
}

std::int64_t ceilTo(std::int64_t t, std::int64_t unit) {
  const std::int64_t f = floorTo(t, unit);
  return f == t ? t : f + unit;
}

std::chrono::year_month_day civilDay(std::int64_t t) {
  using namespace std::chrono;
  return year_month_day(floor<days>(sys_time<nanoseconds>(nanoseconds(t))));
}

std::int64_t nanosOf(std::chrono::sys_days day) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(day.time_since_epoch()).count();
}

// The start of the calendar month (UTC) holding t, and of the next one.
std::int64_t monthStart(std::int64_t t) {
  const auto ymd = civilDay(t);
  return nanosOf(std::chrono::sys_days(ymd.year() / ymd.month() / 1));
}

std::int64_t nextMonth(std::int64_t monthStartNs) {
  const auto ymd = civilDay(monthStartNs);
  return nanosOf(std::chrono::sys_days(ymd.year() / ymd.month() / 1 + std::chrono::months(1)));
}

std::int64_t bucketEnd(char grain, std::int64_t start) {
  return grain == kHour ? start + kHourNs : grain == kDay ? start + kDayNs : nextMonth(start);
}

std::string describe(char grain, std::int64_t start) {
  const char* name = grain == kHour ? "hour " : grain == kDay ? "day " : "month ";
  return name + formatRfc3339(start);
}

std::int64_t timeOfSeq(const Ledger& ledger, std::uint64_t seq) {
  std::int64_t t = 0;
  if (Status st = ledger.timeOf(seq, &t); !st.isOk()) throw ReplayError(st);
  return t;
}

// The stored buckets of one grain covering [from, to) exactly, in order, in
// one scan: a missing or misplaced bucket throws (corrupt), so a caller never
// sums around a hole.
void forEachStored(const Ledger& ledger, char grain, std::int64_t from, std::int64_t to,
                   const std::function<void(UsageBucket&&)>& onBucket,
                   std::uint64_t* storedRead = nullptr) {
  std::int64_t expected = from;
  Status st = ledger.scanUsageRollups(
      format::usageRollupKey(grain, from), format::usageRollupKey(grain, to),
      [&](std::string_view key, kj::ArrayPtr<const capnp::word> words) {
        const std::int64_t start = format::usageRollupStart(key);
        UsageBucket bucket = UsageBucket::fromRollup(words);
        if (start != expected || bucket.startNs != start ||
            bucket.endNs != bucketEnd(grain, start)) {
          throw ReplayError(
              "the usage rollup of the " + describe(grain, expected) + " is missing or misplaced",
              true);
        }
        expected = bucket.endNs;
        if (storedRead != nullptr) ++*storedRead;
        onBucket(std::move(bucket));
        return true;
      });
  if (!st.isOk()) throw ReplayError(st);
  if (expected != to) {
    throw ReplayError("the usage rollup of the " + describe(grain, expected) + " is missing", true);
  }
}

// The same, added up.
UsageBucket readStored(const Ledger& ledger, char grain, std::int64_t from, std::int64_t to,
                       std::uint64_t* storedRead = nullptr) {
  std::optional<UsageBucket> sum;
  forEachStored(
      ledger, grain, from, to,
      [&](UsageBucket&& bucket) {
        if (sum) {
          sum->append(bucket);
        } else {
          sum = std::move(bucket);
        }
      },
      storedRead);
  return sum ? std::move(*sum) : UsageBucket{};
}

// [from, to), whole hours inside the coverage: months, days and hours, the
// largest stored bucket that fits at each step.
UsageBucket readCovered(const Ledger& ledger, std::int64_t from, std::int64_t to,
                        std::uint64_t* storedRead = nullptr) {
  UsageBucket sum;
  bool any = false;
  auto add = [&](UsageBucket&& part) {
    if (!any) {
      sum = std::move(part);
      any = true;
    } else {
      sum.append(part);
    }
  };
  std::int64_t t = from;
  while (t < to) {
    char grain = kHour;
    std::int64_t end = t + kHourNs;
    if (monthStart(t) == t && nextMonth(t) <= to) {
      grain = kMonth;
      end = t;
      while (end < to && nextMonth(end) <= to) end = nextMonth(end);
    } else if (floorTo(t, kDayNs) == t && t + kDayNs <= to) {
      grain = kDay;
      end = t + kDayNs;
      while (end + kDayNs <= to && monthStart(end) != end) end += kDayNs;
    } else {
      while (end + kHourNs <= to && floorTo(end, kDayNs) != end) end += kHourNs;
    }
    add(readStored(ledger, grain, t, end, storedRead));
    t = end;
  }
  return sum;
}

UsageBucket integrateOne(const Ledger& ledger, std::int64_t from, std::int64_t to,
                         const FoldOptions& options, NamedAtEnds* named = nullptr) {
  UsageBucket out;
  integrateUsage(
      ledger, {from, to}, UsageScope{}, options, [&](UsageBucket&& b) { out = std::move(b); },
      nullptr, named);
  return out;
}

// [from, to), the part of the stored hour [hourStart, hourStart + 1h) at
// one of its ends: integrated from the log, or, when the rest of the hour
// holds fewer records, as the stored hour less the rest. A report's edge
// then reads at most half an hour's records, and none at all for a period
// that starts with the history.
//
// The difference has the right integrals (adjacent buckets add up,
// usage_levels.h). It also names the right keys - every key the stored
// hour names - unless a key the rest names, and not held where the two
// meet, integrates to zero over [from, to): whether it came and went there
// in an instant, or was held at zero, the rest cannot tell, so then the
// part is integrated from the log after all.
UsageBucket partialHour(const Ledger& ledger, std::int64_t from, std::int64_t to,
                        std::int64_t hourStart, const FoldOptions& options,
                        std::uint64_t* storedRead) {
  const std::int64_t hourEnd = hourStart + kHourNs;
  const bool head = to == hourEnd;  // else from == hourStart
  const std::int64_t restFrom = head ? hourStart : to;
  const std::int64_t restTo = head ? from : hourEnd;
  const Replayer replayer(ledger);
  const std::uint64_t partRecords = replayer.seqAt(to) - replayer.seqAt(from);
  const std::uint64_t restRecords = replayer.seqAt(restTo) - replayer.seqAt(restFrom);
  if (restRecords >= partRecords) return integrateOne(ledger, from, to, options);
  NamedAtEnds named;
  const UsageBucket rest = integrateOne(ledger, restFrom, restTo, options, &named);
  std::uint64_t hourRead = 0;
  UsageBucket part = readStored(ledger, kHour, hourStart, hourEnd, &hourRead);
  if (!part.subtract(rest)) return integrateOne(ledger, from, to, options);
  const UsageBucket& heldWhereTheyMeet = head ? named.atEnd : named.atStart;
  for (const auto& [key, totals] : rest.reserved) {
    const ReservedIntegrals& left = part.reserved.at(key);
    if (!heldWhereTheyMeet.reserved.contains(key) && left.reserved.isZero() &&
        left.admitted.isZero())
      return integrateOne(ledger, from, to, options);
  }
  for (const auto& [key, integral] : rest.quota) {
    if (!heldWhereTheyMeet.quota.contains(key) && part.quota.at(key).isZero())
      return integrateOne(ledger, from, to, options);
  }
  part.startNs = from;
  part.endNs = to;
  if (storedRead != nullptr) *storedRead += hourRead;
  return part;
}

// Writes the buckets of `grain` made of the finer grain's stored buckets
// that the coverage completes and that are not stored yet.
std::uint64_t rollUp(Ledger& ledger, char grain, char finer, const RollupCoverage& coverage) {
  std::string last;
  if (Status st = ledger.lastUsageRollup(grain, &last); !st.isOk()) throw ReplayError(st);
  std::int64_t t =
      last.empty() ? coverage.startNs : bucketEnd(grain, format::usageRollupStart(last));
  std::map<std::string, std::string> batch;
  for (; bucketEnd(grain, t) <= coverage.endNs; t = bucketEnd(grain, t)) {
    batch[format::usageRollupKey(grain, t)] =
        readStored(ledger, finer, t, bucketEnd(grain, t)).toRollup();
  }
  if (Status st = ledger.putUsageRollups(batch); !st.isOk()) throw ReplayError(st);
  return batch.size();
}

}  // namespace

std::optional<std::uint32_t> storedRollupVersion(const Ledger& ledger) {
  std::optional<std::uint32_t> version;
  Status st = ledger.scanUsageRollups(
      std::string(1, kBucketsFirst), std::string(1, kBucketsLast + 1),
      [&](std::string_view, kj::ArrayPtr<const capnp::word> words) {
        try {
          capnp::FlatArrayMessageReader reader(words);
          version = reader.getRoot<schema::UsageBucket>().getVersion();
        } catch (const kj::Exception&) {
          version = kUsageRollupVersion;  // damaged, not older: verify names it
        }
        return false;
      });
  if (!st.isOk()) throw ReplayError(st);
  return version;
}

std::optional<RollupCoverage> usageRollupCoverage(const Ledger& ledger) {
  std::string last;
  if (Status st = ledger.lastUsageRollup(kHour, &last); !st.isOk()) throw ReplayError(st);
  if (last.empty()) return std::nullopt;
  RollupCoverage out;
  out.endNs = format::usageRollupStart(last) + kHourNs;
  Status st = ledger.scanUsageRollups(format::usageRollupKey(kHour, INT64_MIN), last + '\0',
                                      [&](std::string_view key, kj::ArrayPtr<const capnp::word>) {
                                        out.startNs = format::usageRollupStart(key);
                                        return false;
                                      });
  if (!st.isOk()) throw ReplayError(st);
  return out;
}

std::uint64_t writeUsageRollups(Ledger& ledger, const FoldOptions& options) {
  if (ledger.lastSeq() == 0) return 0;
  const std::int64_t headTime = timeOfSeq(ledger, ledger.lastSeq());
  // Rollups of an earlier version lack what reports now read from them:
  // derived data, so they are written again from the log.
  if (storedRollupVersion(ledger).value_or(kUsageRollupVersion) != kUsageRollupVersion ||
      storedWaitVersion(ledger).value_or(kWaitRollupVersion) != kWaitRollupVersion) {
    if (Status st = ledger.dropUsageRollups(); !st.isOk()) throw ReplayError(st);
  }
  auto coverage = usageRollupCoverage(ledger);
  const std::int64_t start = coverage ? coverage->endNs : monthStart(timeOfSeq(ledger, 1));
  // The last hour that ended before the head: a record appended later may
  // still carry the head's time (times never go back, but may stand still).
  const std::int64_t end = floorTo(headTime - 1, kHourNs);
  std::uint64_t written = 0;
  if (headTime > start) {
    std::vector<std::int64_t> boundaries;
    for (std::int64_t t = start; t <= end; t += kHourNs) boundaries.push_back(t);
    // On to the head for the held levels alone: the hour the head is in is
    // not stored, but the held levels reach the last record, where a
    // question up to "now" ends.
    if (boundaries.back() < headTime) boundaries.push_back(headTime);
    std::map<std::string, std::string> batch;
    // The held levels of the same records go with the hours (held_record.h).
    HeldRecorder held;
    const std::uint64_t runStart = heldRunStart(ledger, Replayer(ledger).seqAt(start));
    auto flush = [&](bool last) {
      written += batch.size();
      if (last) held.runEnd(runStart);
      batch.merge(held.take());
      if (Status st = ledger.putUsageRollups(batch); !st.isOk()) throw ReplayError(st);
      batch.clear();
    };
    // Hours in order, a batch at a time: an interrupted run leaves whole
    // hours, and the next run goes on from the last.
    integrateUsage(
        ledger, boundaries, UsageScope{}, options,
        [&](UsageBucket&& bucket) {
          if (bucket.endNs > end) return;  // the hour the head is in
          batch[format::usageRollupKey(kHour, bucket.startNs)] = bucket.toRollup();
          if (batch.size() >= 512 || held.pending() >= 8192) flush(false);
        },
        nullptr, nullptr, HeldLevelsUse{false, &held});
    flush(true);
    if (end > start) coverage = RollupCoverage{coverage ? coverage->startNs : start, end};
  }
  if (coverage) {
    written += rollUp(ledger, kDay, kHour, *coverage);
    written += rollUp(ledger, kMonth, kDay, *coverage);
  }
  // The waits' hours and states, from the same records (wait_rollups.h).
  return written + writeWaitRollups(ledger);
}

UsageBucket usageFromRollups(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                             const FoldOptions& options, std::uint64_t* storedRead) {
  const auto coverage = usageRollupCoverage(ledger);
  if (!coverage) return integrateOne(ledger, fromNs, toNs, options);
  const std::int64_t a = std::max(ceilTo(fromNs, kHourNs), coverage->startNs);
  const std::int64_t b = std::min(floorTo(toNs, kHourNs), coverage->endNs);
  if (a >= b) return integrateOne(ledger, fromNs, toNs, options);
  // The partial hours at the edges, from their stored hours when those are
  // in the coverage too.
  auto edge = [&](std::int64_t from, std::int64_t to) {
    const std::int64_t hourStart = floorTo(from, kHourNs);
    if (hourStart >= coverage->startNs && hourStart + kHourNs <= coverage->endNs)
      return partialHour(ledger, from, to, hourStart, options, storedRead);
    return integrateOne(ledger, from, to, options);
  };
  UsageBucket out = fromNs < a ? edge(fromNs, a) : UsageBucket{};
  UsageBucket middle = readCovered(ledger, a, b, storedRead);
  if (fromNs < a) {
    out.append(middle);
  } else {
    out = std::move(middle);
  }
  if (b < toNs) out.append(edge(b, toNs));
  return out;
}

void usageSeries(const Ledger& ledger, const std::vector<std::int64_t>& boundaries,
                 const FoldOptions& options, const std::function<void(UsageBucket&&)>& onBucket) {
  const auto coverage = usageRollupCoverage(ledger);
  auto stored = [&](std::size_t i) {
    return coverage && floorTo(boundaries[i], kHourNs) == boundaries[i] &&
           floorTo(boundaries[i + 1], kHourNs) == boundaries[i + 1] &&
           coverage->startNs <= boundaries[i] && boundaries[i + 1] <= coverage->endNs;
  };
  std::size_t i = 0;
  while (i + 1 < boundaries.size()) {
    // A run of steps the rollups serve.
    std::size_t j = i;
    while (j + 1 < boundaries.size() && stored(j)) ++j;
    if (j > i) {
      bool shortSteps = true;
      for (std::size_t k = i; k < j; ++k) shortSteps &= boundaries[k + 1] - boundaries[k] < kDayNs;
      if (!shortSteps) {
        // Day-long steps and more: each from its largest stored buckets.
        for (; i < j; ++i) onBucket(readCovered(ledger, boundaries[i], boundaries[i + 1]));
        continue;
      }
      // Steps of hours: the run's hours in one scan, cut at the steps (a
      // month of hourly steps is 720 reads otherwise, each seeking again).
      std::optional<UsageBucket> step;
      forEachStored(ledger, kHour, boundaries[i], boundaries[j], [&](UsageBucket&& hour) {
        if (step) {
          step->append(hour);
        } else {
          step = std::move(hour);
        }
        if (step->endNs == boundaries[i + 1]) {
          onBucket(std::move(*step));
          step.reset();
          ++i;
        }
      });
      continue;
    }
    // A run of buckets the rollups cannot serve: one pass over its records.
    j = i + 1;
    while (j + 1 < boundaries.size() && !stored(j)) ++j;
    integrateUsage(ledger,
                   std::vector<std::int64_t>(boundaries.begin() + i, boundaries.begin() + j + 1),
                   UsageScope{}, options, onBucket);
    i = j;
  }
}

namespace {

// The stored held levels against those the records give (`fresh`, every
// change and the snapshots at the stored ones' seqs): each stored one equal,
// and every change inside a stored run stored.
void checkHeldLevels(const std::map<std::string, std::string>& fresh,
                     const std::map<std::string, std::string>& stored, RollupVerification& v) {
  auto name = [](const std::string& key) {
    return std::string(key[0] == format::kHeldChanges ? "held changes" : "held levels") +
           " after seq " + std::to_string(format::heldRecordSeq(key));
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // (runStart, end]
  for (const auto& [key, bytes] : stored) {
    if (key[0] != format::kHeldRunEnd) continue;
    const auto words = kj::arrayPtr(reinterpret_cast<const capnp::word*>(bytes.data()),
                                    bytes.size() / sizeof(capnp::word));
    std::uint64_t runStart = 0;
    try {
      capnp::FlatArrayMessageReader reader(words);
      runStart = reader.getRoot<schema::HeldLevels>().getRunStartSeq();
    } catch (const kj::Exception& e) {
      v.firstBad =
          "held levels' run ending after seq " + std::to_string(format::heldRecordSeq(key));
      v.problem = std::string("does not decode: ") + e.getDescription().cStr();
      return;
    }
    runs.emplace_back(runStart, format::heldRecordSeq(key));
  }
  std::uint64_t lastEnd = 0;
  for (const auto& run : runs) lastEnd = std::max(lastEnd, run.second);
  for (const auto& [key, bytes] : stored) {
    // Past every run's end: left by a pass that stopped before its end, and
    // read by nothing (StoredHeldLevels::open wants a run).
    if (key[0] == format::kHeldRunEnd || format::heldRecordSeq(key) > lastEnd) continue;
    auto it = fresh.find(key);
    if (it == fresh.end() || it->second != bytes) {
      v.firstBad = name(key);
      v.problem = it == fresh.end() ? "stored where the records changed no holding"
                                    : "differs from what the records give";
      return;
    }
    ++v.checked;
  }
  for (const auto& [key, bytes] : fresh) {
    if (key[0] != format::kHeldChanges || stored.contains(key)) continue;
    const std::uint64_t seq = format::heldRecordSeq(key);
    for (const auto& [runStart, end] : runs) {
      if (seq > runStart && seq <= end) {
        v.firstBad = name(key);
        v.problem = "missing";
        return;
      }
    }
  }
}

// The last seq a stored run of held levels reaches (0: none).
std::uint64_t lastHeldRunEnd(const std::map<std::string, std::string>& storedHeld) {
  auto it = storedHeld.lower_bound(std::string(1, static_cast<char>(format::kHeldRunEnd + 1)));
  if (it == storedHeld.begin()) return 0;
  --it;
  return it->first[0] == format::kHeldRunEnd ? format::heldRecordSeq(it->first) : 0;
}

// `v` and then the stored wait data's verification (wait_rollups.h).
RollupVerification withWaits(const Ledger& ledger, RollupVerification v) {
  if (!v.firstBad.empty()) return v;
  const WaitRollupVerification waits = verifyWaitRollups(ledger);
  v.checked += waits.checked;
  v.firstBad = waits.firstBad;
  v.problem = waits.problem;
  return v;
}

// The stored buckets and held levels (the wait data is verifyWaitRollups');
// false, with the problem in `v`, when they cannot be read.
bool readStoredRollups(const Ledger& ledger, std::map<std::string, UsageBucket>& stored,
                       std::map<std::string, std::string>& storedHeld, RollupVerification& v) {
  try {
    Status st = ledger.scanUsageRollups(
        std::string(1, '\0'), std::string(1, '\xff'),
        [&](std::string_view key, kj::ArrayPtr<const capnp::word> words) {
          // The stored wait data: verifyWaitRollups checks it.
          if (key.size() == format::kUsageRollupKeySize &&
              (key[0] == format::kWaitHour || key[0] == format::kWaitState))
            return true;
          if (key.size() == format::kUsageRollupKeySize &&
              (key[0] == format::kHeldChanges || key[0] == format::kHeldSnapshot ||
               key[0] == format::kHeldRunEnd)) {
            auto bytes = words.asBytes();
            storedHeld.emplace(key, std::string(bytes.begin(), bytes.end()));
            return true;
          }
          if (key.size() != format::kUsageRollupKeySize ||
              (key[0] != kHour && key[0] != kDay && key[0] != kMonth)) {
            throw ReplayError("a usage rollup key is malformed", true);
          }
          stored.emplace(std::string(key), UsageBucket::fromRollup(words));
          return true;
        });
    if (!st.isOk()) {
      v.firstBad = "usage rollups";
      v.problem = st.toString();
      return false;
    }
  } catch (const ReplayError& e) {
    v.firstBad = "usage rollups";
    v.problem = e.what();
    return false;
  }
  return true;
}

}  // namespace

RollupVerification verifyUsageRollups(const Ledger& ledger) {
  RollupVerification v;
  // Written by an earlier build: no answer reads them (UsageBucket::
  // fromRollup refuses them) and the next writer replaces them.
  if (auto version = storedRollupVersion(ledger); version && *version != kUsageRollupVersion) {
    v.olderVersion = true;
    return v;
  }
  std::map<std::string, UsageBucket> stored;
  std::map<std::string, std::string> storedHeld;
  if (!readStoredRollups(ledger, stored, storedHeld, v)) return v;
  const auto coverage = usageRollupCoverage(ledger);
  const std::uint64_t heldEnd = lastHeldRunEnd(storedHeld);
  if (!coverage && heldEnd == 0) return withWaits(ledger, v);
  auto check = [&](char grain, const UsageBucket& fresh) {
    if (!v.firstBad.empty()) return;
    auto it = stored.find(format::usageRollupKey(grain, fresh.startNs));
    if (it == stored.end()) {
      v.firstBad = describe(grain, fresh.startNs);
      v.problem = "missing";
    } else if (!(it->second == fresh)) {
      v.firstBad = describe(grain, fresh.startNs);
      v.problem = "differs from a fresh integration of the log";
    } else {
      ++v.checked;
      stored.erase(it);
    }
  };
  // The hours the rollups cover, and on to where the held levels end (the
  // writer's pass goes on to the head for them). A cut ledger integrates from
  // the cut: the buckets before the first whole hour after it, and the held
  // levels up to it, were integrated from the archived records and are taken
  // as the link to the archive is.
  std::int64_t startNs = coverage ? coverage->startNs : monthStart(timeOfSeq(ledger, 1));
  const std::int64_t endNs = coverage ? coverage->endNs : startNs;
  std::int64_t checkedFrom = startNs;
  if (const auto& cut = ledger.archiveCut()) {
    checkedFrom = std::max(startNs, ceilTo(cut->timeNs, kHourNs));
    startNs = std::max(startNs, cut->timeNs);
    std::erase_if(stored, [&](const auto& entry) {
      return format::usageRollupStart(entry.first) < checkedFrom;
    });
    const std::uint64_t fromSeq = Replayer(ledger).seqAt(startNs);
    std::erase_if(storedHeld,
                  [&](const auto& entry) { return format::heldRecordSeq(entry.first) <= fromSeq; });
  }
  std::vector<std::int64_t> boundaries{startNs};
  for (std::int64_t t = checkedFrom; t <= endNs; t += kHourNs) {
    if (t > boundaries.back()) boundaries.push_back(t);
  }
  if (heldEnd > 0) {
    const std::int64_t heldEndNs = timeOfSeq(ledger, std::min(heldEnd, ledger.lastSeq()));
    if (heldEndNs > boundaries.back()) boundaries.push_back(heldEndNs);
  }
  std::optional<UsageBucket> day, month;
  HeldRecorder held;
  for (const auto& [key, bytes] : storedHeld) {
    if (key[0] == format::kHeldSnapshot) held.alsoSnapshotAt(format::heldRecordSeq(key));
  }
  if (boundaries.size() >= 2) {
    integrateUsage(
        ledger, boundaries, UsageScope{}, {},
        [&](UsageBucket&& hour) {
          // Before the first whole hour after a cut, or past the hours: held
          // levels only.
          if (hour.startNs < checkedFrom || hour.endNs > endNs) return;
          for (auto* sum : {&day, &month}) {
            if (*sum) {
              (*sum)->append(hour);
            } else {
              *sum = hour;
            }
          }
          check(kHour, hour);
          if (floorTo(hour.endNs, kDayNs) == hour.endNs) {
            if (floorTo(day->startNs, kDayNs) == day->startNs) check(kDay, *day);
            day.reset();
          }
          if (monthStart(hour.endNs) == hour.endNs) {
            if (monthStart(month->startNs) == month->startNs) check(kMonth, *month);
            month.reset();
          }
        },
        nullptr, nullptr, HeldLevelsUse{false, &held});
  }
  if (v.firstBad.empty()) checkHeldLevels(held.take(), storedHeld, v);
  if (v.firstBad.empty() && !stored.empty()) {
    const auto& key = stored.begin()->first;
    v.firstBad = describe(key[0], format::usageRollupStart(key));
    v.problem = "stored outside the hours the rollups cover";
  }
  return withWaits(ledger, v);
}

}  // namespace ledger::replay
