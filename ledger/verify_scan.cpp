#include "ledger/internal/verify_scan.h"

#include <capnp/serialize.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <future>
#include <thread>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/object_index.h"
#include "ledger/record.h"
#include "ledger/sha256.h"
#include "schema/projection.capnp.h"

namespace ledger::verify_scan {

void Findings::atSeq(std::uint64_t seq, std::string problem) {
  if (seq_ != 0 && seq_ <= seq) return;
  seq_ = seq;
  family_.clear();
  key_.clear();
  problem_ = std::move(problem);
}

void Findings::atKey(const char* family, std::string_view key, std::string problem) {
  if (any()) return;
  family_ = family;
  key_ = printable(key);
  problem_ = std::move(problem);
}

void Findings::into(VerifyReport& report) const {
  report.firstBadSeq = seq_;
  report.badFamily = family_;
  report.badKey = key_;
  report.problem = problem_;
}

std::string Findings::printable(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7F && b != '\\') {
      out.push_back(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    }
  }
  return out;
}

namespace {

// Fewer records than this in a range are checked faster than a thread starts.
constexpr std::uint64_t kMinRangeRecords = 20000;

void noteLive(const Record& r, std::unordered_map<std::string, LiveExpectation>& live) {
  LiveExpectation& e = live[r.identity.objectKey()];
  e.seq = r.seq;
  e.deleted = r.type == EventType::kDeleted;
  if (e.deleted) return;
  e.uid = r.identity.uid;
  e.resourceVersion = r.identity.resourceVersion;
  e.contentHash.reset();
  if (r.identity.uid.empty() || r.identity.resourceVersion.empty()) {
    e.contentHash = Sha256::of(r.objectJson);
  }
}

// One range of the log, [first, last], checked from `start` (the record
// before it, taken as sound: the range before checks it).
class RangeCheck {
 public:
  RangeCheck(const Ledger& ledger, const VerifyOptions& options, bool objectIndex)
      : ledger_(ledger), options_(options), objectIndex_(objectIndex) {}

  // `tick` is called with each record's seq once it is checked.
  Status run(const ChainPoint& start, std::uint64_t last,
             const std::function<void(std::uint64_t)>& tick, LogScan* out);

 private:
  // The checks of one record; false (with a finding) stops the range.
  bool record(const Record& r, const Digest& stored, LogScan& out);
  bool fail(LogScan& out, std::uint64_t seq, std::string problem) {
    out.findings.atSeq(seq, std::move(problem));
    return false;
  }

  const Ledger& ledger_;
  const VerifyOptions& options_;
  const bool objectIndex_;
  std::uint64_t expected_ = 0;
  std::int64_t lastTime_ = INT64_MIN;
  Sha256 chain_;
  std::string projection_;
  std::vector<std::string> recordIndexKeys_;
  AlignedBuffer indexBuffer_;
};

Status RangeCheck::run(const ChainPoint& start, std::uint64_t last,
                       const std::function<void(std::uint64_t)>& tick, LogScan* out) {
  expected_ = start.seq + 1;
  lastTime_ = start.timeNs;
  out->lastSeq = start.seq;
  out->lastHash = start.hash;
  out->times.reserve(last - start.seq);
  // Read past `last` to the head: a range whose last record is missing
  // names the gap as a single pass would, by the next record stored.
  Status st =
      ledger_.scanRecords(expected_, ledger_.lastSeq(), [&](const Record& r, const Digest& stored) {
        if (!record(r, stored, *out)) return false;
        tick(r.seq);
        return expected_ <= last;
      });
  if (!st.isOk()) {
    if (!st.isCorruption()) return st;
    // Storage-level corruption (a bad block): the first seq not yet verified.
    if (!out->findings.any()) out->findings.atSeq(expected_, st.message());
  }
  if (!out->findings.any() && out->lastSeq != last) {
    out->findings.atSeq(out->lastSeq + 1, "records end at seq " + std::to_string(out->lastSeq) +
                                              " but the head says " +
                                              std::to_string(ledger_.lastSeq()));
  }
  return Status::ok();
}

bool RangeCheck::record(const Record& r, const Digest& stored, LogScan& out) {
  if (r.seq != expected_) {
    // The key skipped ahead (a gap) or the stored seq disagrees with its key.
    return fail(out, expected_,
                r.seq > expected_
                    ? "sequence gap: next record stored is seq " + std::to_string(r.seq)
                    : "record holds seq " + std::to_string(r.seq));
  }
  if (chainHash(out.lastHash, encodeRecord(r), chain_) != stored)
    return fail(out, r.seq, "hash chain broken: stored hash does not match");
  if (r.timeNs < lastTime_) return fail(out, r.seq, "event time goes backwards");
  if (!ledger_.getRaw(format::kProjectionFamily, format::seqKey(r.seq), &projection_).isOk())
    return fail(out, r.seq, "projection missing");
  if (Status problem = checkProjection(projection_, &r); !problem.isOk()) {
    return fail(out, r.seq,
                problem.message() + " (`ledger-replay rebuild-projection` derives it again)");
  }
  // Reports are computed from the projection alone, and the chain covers
  // only the log: a projection that decodes and names its record can still
  // say 9Gi where the record's JSON says 8Gi. Derived again and compared
  // byte for byte, it is as trustworthy as the record.
  if (options_.project && projection_ != buildProjectedRecord(r, options_.project(r))) {
    // Which it is, only `meta` can prove: a ledger whose projections an
    // older projector wrote holds other bytes for the same JSON (format.h,
    // kProjectionFormat). The record is sound either way; the rebuild
    // derives its projection again.
    if (ledger_.projectionFormat() < format::kProjectionFormat) {
      return fail(out, r.seq,
                  "projection was written by an older projector (projection format " +
                      std::to_string(ledger_.projectionFormat()) + ", this build's is " +
                      std::to_string(format::kProjectionFormat) +
                      "): run `ledger-replay rebuild-projection`");
    }
    return fail(out, r.seq,
                "projection is not what the record's JSON projects to (edited, or projected "
                "with another --kueue-config; `ledger-replay rebuild-projection` derives it "
                "again)");
  }
  out.times.push_back(r.timeNs);
  if (options_.dedupeKey) {
    const std::string key = options_.dedupeKey(r);
    if (!key.empty()) out.dedupe.push_back({XXH3_64bits(key.data(), key.size()), r.seq});
  }
  if (options_.legacyDedupeKeys) {
    for (const std::string& key : options_.legacyDedupeKeys(r))
      out.legacyDedupe.push_back({XXH3_64bits(key.data(), key.size()), r.seq});
  }
  noteLive(r, out.live);
  if (objectIndex_) {
    capnp::FlatArrayMessageReader reader(indexBuffer_.load(projection_));
    recordIndexKeys_.clear();
    appendObjectIndexKeys(r.seq, reader.getRoot<schema::ProjectedRecord>(), recordIndexKeys_);
    for (const auto& k : recordIndexKeys_) out.indexKeys.push_back(XXH3_64bits(k.data(), k.size()));
  }
  out.lastHash = stored;
  lastTime_ = r.timeNs;
  out.recordsChecked++;
  out.lastSeq = r.seq;
  ++expected_;
  return true;
}

// The stored hash and time of record `seq`, where the range after it
// starts; nullopt when it cannot be read as that record (the range before
// reports why).
std::optional<ChainPoint> pointAt(const Ledger& ledger, std::uint64_t seq) {
  std::optional<ChainPoint> point;
  Status st = ledger.scanRecords(seq, seq, [&](const Record& r, const Digest& stored) {
    if (r.seq == seq) point = ChainPoint{seq, stored, r.timeNs};
    return false;
  });
  if (!st.isOk()) return std::nullopt;
  return point;
}

// Appends `next` (the range after) to `into`, the single pass's result so far.
void append(LogScan& into, LogScan&& next) {
  into.findings = next.findings;
  into.recordsChecked += next.recordsChecked;
  into.lastSeq = next.lastSeq;
  into.lastHash = next.lastHash;
  into.times.insert(into.times.end(), next.times.begin(), next.times.end());
  into.dedupe.insert(into.dedupe.end(), next.dedupe.begin(), next.dedupe.end());
  into.legacyDedupe.insert(into.legacyDedupe.end(), next.legacyDedupe.begin(),
                           next.legacyDedupe.end());
  into.indexKeys.insert(into.indexKeys.end(), next.indexKeys.begin(), next.indexKeys.end());
  // A later range holds the later record of an object.
  for (auto& [key, expectation] : next.live) into.live[key] = std::move(expectation);
}

}  // namespace

Status scanLog(const Ledger& ledger, const VerifyOptions& options, bool objectIndex, LogScan* out) {
  *out = LogScan{};
  const std::uint64_t head = ledger.lastSeq();
  const std::uint64_t first = ledger.firstSeq();
  // A cut ledger starts from the link to its archive (ledger.h, ArchiveCut),
  // taken as verified as verifyChain takes its starting point.
  const std::optional<ArchiveCut>& cut = ledger.archiveCut();
  const ChainPoint origin = cut ? ChainPoint{cut->seq, cut->hash, cut->timeNs}
                                : ChainPoint{first - 1, Digest{}, INT64_MIN};
  out->lastSeq = origin.seq;
  out->lastHash = origin.hash;
  if (head < first) return Status::ok();
  const std::uint64_t records = head - first + 1;
  const std::uint64_t cores = std::max(1U, std::thread::hardware_concurrency());
  const std::uint64_t ranges =
      options.scanRanges != 0 ? std::min<std::uint64_t>(options.scanRanges, records)
                              : std::clamp<std::uint64_t>(records / kMinRangeRecords, 1, cores);
  if (ranges == 1) {
    RangeCheck check(ledger, options, objectIndex);
    return check.run(
        origin, head,
        [&](std::uint64_t seq) {
          if (options.progress) options.progress(seq, head);
        },
        out);
  }
  std::vector<LogScan> scans(ranges);
  std::vector<std::future<Status>> running;
  std::atomic<std::uint64_t> checked{0};
  for (std::uint64_t i = 0; i < ranges; ++i) {
    const std::uint64_t from = first + records * i / ranges;
    const std::uint64_t last = first + records * (i + 1) / ranges - 1;
    running.push_back(std::async(std::launch::async, [&, i, from, last] {
      const std::optional<ChainPoint> start = i == 0 ? origin : pointAt(ledger, from - 1);
      if (!start) {
        scans[i].findings.atSeq(from - 1, "record unreadable");
        return Status::ok();
      }
      RangeCheck check(ledger, options, objectIndex);
      return check.run(
          *start, last, [&](std::uint64_t) { checked.fetch_add(1, std::memory_order_relaxed); },
          &scans[i]);
    }));
  }
  // Progress on the calling thread, as the records checked so far.
  auto report = [&] {
    if (options.progress) options.progress(first - 1 + checked.load(), head);
  };
  for (auto& r : running) {
    while (r.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) report();
  }
  Status failure = Status::ok();
  for (auto& r : running) {
    if (Status st = r.get(); !st.isOk() && failure.isOk()) failure = st;
  }
  if (!failure.isOk()) return failure;
  report();
  for (auto& scan : scans) {
    const bool bad = scan.findings.any();
    append(*out, std::move(scan));
    if (bad) break;
  }
  return Status::ok();
}

}  // namespace ledger::verify_scan
