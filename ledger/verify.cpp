#include "ledger/verify.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/internal/verify_carried.h"
#include "ledger/internal/verify_scan.h"
#include "ledger/object_index.h"
#include "ledger/record_capnp.h"
#include "schema/projection.capnp.h"

namespace ledger {

Status checkProjection(std::string_view bytes, const Record* record) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0) {
    return Status::corruption("projection is not a whole number of words");
  }
  thread_local AlignedBuffer buffer;
  const kj::ArrayPtr<const capnp::word> words = buffer.load(bytes);
  try {
    // A deep copy follows every pointer, bounds-checking each, and counts
    // what it reads against the traversal limit, set to the message's own
    // size: a builder writes each object once and points to it once, so a
    // message that reads as more than it holds (pointers sharing one list,
    // lists of zero-sized elements that claim any length) was not written
    // by the ledger, and reading it would take as long as it claims.
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = 2 * words.size() + 64;
    capnp::FlatArrayMessageReader reader(words, limits);
    const auto projected = reader.getRoot<schema::ProjectedRecord>();
    capnp::MallocMessageBuilder copy;
    copy.setRoot(projected);
    if (record != nullptr && (static_cast<std::uint16_t>(projected.getType()) !=
                                  static_cast<std::uint16_t>(record->type) ||
                              projected.getTimeNs() != record->timeNs ||
                              readIdentity(projected.getIdentity()) != record->identity)) {
      return Status::corruption("projection is not the record's (type, time or identity differ)");
    }
  } catch (const kj::Exception& e) {
    return Status::corruption(std::string("projection does not decode: ") +
                              e.getDescription().cStr());
  }
  return Status::ok();
}

namespace {

using verify_scan::CarriedEntries;
using verify_scan::Findings;
using verify_scan::KeyedSeq;
using verify_scan::LiveExpectation;

// time_index: exactly timeKey(time, seq) with an empty value for each record.
// Times never go backwards along the log (checked before), so in key order
// the entries of records 1..times.size() come in seq order, and one pass
// compares them with the log. Entries of records past those read are
// skipped unless the whole log was read (`complete`): then they are extra.
Status checkTimeIndex(const Ledger& ledger, const std::vector<std::int64_t>& times,
                      std::uint64_t first, std::uint64_t head, bool complete, Findings& findings) {
  const std::uint64_t checked = first - 1 + times.size();
  std::uint64_t next = first;
  bool done = false;
  Status st =
      ledger.scanRaw(format::kTimeIndexFamily, [&](std::string_view key, std::string_view value) {
        if (done) return;
        if (key.size() != 16) {
          findings.atKey(format::kTimeIndexFamily, key, "time index key is not a time and a seq");
          done = true;
          return;
        }
        const std::uint64_t seq = format::seqFromTimeKey(key);
        if (seq > checked && !complete) return;
        if (next <= checked && key == format::timeKey(times[next - first], next)) {
          if (!value.empty()) {
            findings.atSeq(next, "time index entry holds a value");
            done = true;
          }
          ++next;
          return;
        }
        if (next <= checked && key > format::timeKey(times[next - first], next)) {
          findings.atSeq(next, "time index entry missing");
        } else if (seq < first) {
          findings.atKey(format::kTimeIndexFamily, key,
                         "time index entry for seq " + std::to_string(seq) +
                             ", which the archive holds (the cut removes it)");
        } else if (seq == 0 || seq > head) {
          findings.atKey(format::kTimeIndexFamily, key,
                         "time index entry for seq " + std::to_string(seq) + ", beyond the head " +
                             std::to_string(head));
        } else {
          // A second entry for a record, at a time not its own: a query "as of"
          // that time would stop at it (Ledger::seqAtOrBefore).
          findings.atSeq(seq, "time index has an entry for it at " +
                                  std::to_string(format::timeFromKey(key)) + " ns, not its time " +
                                  std::to_string(times[seq - first]) + " ns");
        }
        done = true;
      });
  if (!st.isOk()) return st;
  if (!done && next <= checked) findings.atSeq(next, "time index entry missing");
  return Status::ok();
}

// events: each key names a committed record, 8 bytes big-endian. With the
// writer's key function, each names a record forming that key, and each key
// the records form names the last of them (ingest asks only whether a key is
// there; a key missing makes it record the event again).
//
// A key in an earlier build's format (`legacy`, VerifyOptions::
// legacyDedupeKeys) that names a record forming it is accepted, and
// accounts for that record's key: the Ingester honours it, and it is derived
// from the log like today's.
Status checkEvents(const Ledger& ledger, std::vector<KeyedSeq> expected,
                   std::vector<KeyedSeq> legacy, std::uint64_t head, const VerifyOptions& options,
                   CarriedEntries* carried, Findings& findings) {
  std::sort(expected.begin(), expected.end());
  std::sort(legacy.begin(), legacy.end());
  std::vector<std::uint8_t> matched(expected.size());
  std::vector<std::uint8_t> namedByLegacyKey(options.legacyDedupeKeys ? head + 1 : 0);
  bool done = false;
  Status failure = Status::ok();
  Status st =
      ledger.scanRaw(format::kEventsFamily, [&](std::string_view key, std::string_view value) {
        if (done) return;
        done = true;
        if (value.size() != 8) {
          findings.atKey(format::kEventsFamily, key, "dedupe entry is not a seq");
          return;
        }
        const std::uint64_t seq = format::decodeU64(value);
        if (seq == 0 || seq > head) {
          findings.atKey(format::kEventsFamily, key,
                         "dedupe key names seq " + std::to_string(seq) + ", beyond the head " +
                             std::to_string(head));
          return;
        }
        // A key naming a record the archive holds: ingest keeps it so that a
        // relist does not record that version again; taken as the link is,
        // unless the archive is given to check it against.
        if (seq < ledger.firstSeq()) {
          if (carried != nullptr) failure = carried->event(key, seq, findings);
          done = !failure.isOk() || findings.any();
          return;
        }
        if (carried != nullptr) carried->laterEvent(key);
        if (options.dedupeKey) {
          const KeyedSeq want{XXH3_64bits(key.data(), key.size()), seq};
          const auto at = std::lower_bound(expected.begin(), expected.end(), want);
          if ((at == expected.end() || *at != want) &&
              std::binary_search(legacy.begin(), legacy.end(), want)) {
            namedByLegacyKey[seq] = 1;
            done = false;
            return;
          }
          if (at == expected.end() || *at != want) {
            Record record;
            failure = ledger.read(seq, &record);
            if (!failure.isOk()) return;
            const std::string actual = options.dedupeKey(record);
            findings.atKey(format::kEventsFamily, key,
                           "dedupe key names seq " + std::to_string(seq) + ", whose record forms " +
                               (actual.empty() ? std::string("no key")
                                               : "the key " + Findings::printable(actual)));
            return;
          }
          auto& seen = matched[static_cast<std::size_t>(at - expected.begin())];
          if (seen != 0) {
            findings.atKey(format::kEventsFamily, key,
                           "a second dedupe key names seq " + std::to_string(seq));
            return;
          }
          seen = 1;
        }
        done = false;
      });
  if (!st.isOk()) return st;
  if (!failure.isOk()) return failure;
  if (!done && carried != nullptr) {
    if (st = carried->finishEvents(findings); !st.isOk()) return st;
  }
  if (done || !options.dedupeKey) return Status::ok();
  // Sorted by key, not seq: every one is looked at, and Findings keeps the lowest.
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const bool lastOfKey =
        i + 1 == expected.size() || expected[i + 1].keyHash != expected[i].keyHash;
    if (lastOfKey && matched[i] == 0 &&
        (namedByLegacyKey.empty() || namedByLegacyKey[expected[i].seq] == 0)) {
      findings.atSeq(expected[i].seq,
                     "its dedupe key is not in events, or names an earlier record (ingest would "
                     "record the event again)");
    }
  }
  return Status::ok();
}

// live: the objects whose last record is not a deletion, each with what
// Ledger::append writes for that record (encodeLive); a value without the
// digest is what builds before digests wrote, and is accepted.
Status checkLive(const Ledger& ledger,
                 const std::unordered_map<std::string, LiveExpectation>& expected,
                 CarriedEntries* carried, Findings& findings) {
  // A cut ledger keeps the live entries of objects whose last record the
  // archive holds: taken as the link is, unless the archive is given.
  const bool cut = ledger.archiveCut().has_value();
  std::vector<const std::pair<const std::string, LiveExpectation>*> wanted;
  wanted.reserve(expected.size());
  for (const auto& e : expected) wanted.push_back(&e);
  std::sort(wanted.begin(), wanted.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  std::size_t next = 0;
  auto missing = [&](const LiveExpectation& e) {
    if (e.deleted) return;
    findings.atSeq(e.seq,
                   "the object's live entry is missing (ingest would take its next "
                   "version for a new object)");
  };
  LiveObject stored;
  Status failure = Status::ok();
  Status st = ledger.scanRaw(format::kLiveFamily, [&](std::string_view key,
                                                      std::string_view value) {
    for (; next < wanted.size() && wanted[next]->first < key; ++next) missing(wanted[next]->second);
    if (next == wanted.size() || wanted[next]->first != key) {
      if (!cut) {
        findings.atKey(format::kLiveFamily, key, "live entry for an object no record leaves live");
      } else if (carried != nullptr && failure.isOk()) {
        failure = carried->liveEntry(key, value, findings);
      }
      return;
    }
    const LiveExpectation& e = wanted[next++]->second;
    if (e.deleted) {
      findings.atSeq(e.seq, "the object's live entry is there after its deletion");
      return;
    }
    decodeLive(value, &stored);
    PendingRecord encoded;
    encoded.identity.uid = stored.uid;
    encoded.identity.resourceVersion = stored.resourceVersion;
    encoded.contentHash = stored.contentHash;
    const bool digestOk =
        !stored.contentHash || (e.contentHash && *e.contentHash == *stored.contentHash);
    if (encodeLive(encoded) != value || stored.uid != e.uid ||
        stored.resourceVersion != e.resourceVersion || !digestOk) {
      findings.atSeq(e.seq,
                     "the object's live entry is not this record's (uid, resourceVersion or "
                     "digest differ)");
    }
  });
  if (!st.isOk()) return st;
  if (!failure.isOk()) return failure;
  for (; next < wanted.size(); ++next) missing(wanted[next]->second);
  if (carried != nullptr && !findings.any()) return carried->finishLive(expected, findings);
  return Status::ok();
}

// object_index: exactly the keys the records' projections form (XXH3-64 of
// each, as the dedupe keys), a record entry standing for the per-record keys
// of every seq it lists, each listed once; referrer keys with an empty
// value. Checked only when the ledger says the index covers every record
// (format.h).
Status checkObjectIndex(const Ledger& ledger, std::vector<std::uint64_t> expected,
                        CarriedEntries* carried, Findings& findings) {
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  std::vector<std::uint8_t> matched(expected.size());
  std::vector<std::uint64_t> seqs;
  std::string recordKey;
  // Marks one formed key as stored; false (with a finding) when no record
  // forms it.
  auto match = [&](std::string_view storedKey, std::string_view formedKey) {
    const std::uint64_t h = XXH3_64bits(formedKey.data(), formedKey.size());
    const auto at = std::lower_bound(expected.begin(), expected.end(), h);
    if (at == expected.end() || *at != h) {
      findings.atKey(format::kObjectIndexFamily, storedKey,
                     "object index entry that no record forms (`ledger-replay "
                     "rebuild-projection` derives the index again)");
      return false;
    }
    std::uint8_t& seen = matched[static_cast<std::size_t>(at - expected.begin())];
    if (seen != 0 && storedKey.starts_with('r')) {
      findings.atKey(format::kObjectIndexFamily, storedKey,
                     "object index lists record seq " +
                         std::to_string(format::decodeU64(formedKey.substr(formedKey.size() - 8))) +
                         " a second time");
      return false;
    }
    seen = 1;
    return true;
  };
  Status failure = Status::ok();
  Status st =
      ledger.scanRaw(format::kObjectIndexFamily, [&](std::string_view key, std::string_view value) {
        if (findings.any() || !failure.isOk()) return;
        std::string_view objectKey;
        std::uint64_t first = 0;
        if (!parseRecordEntryKey(key, &objectKey, &first)) {
          if (!value.empty()) {
            findings.atKey(format::kObjectIndexFamily, key, "object index entry holds a value");
            return;
          }
          // A referrer key may be formed by a record the archive holds only.
          const std::uint64_t h = XXH3_64bits(key.data(), key.size());
          if (ledger.archiveCut() && !std::binary_search(expected.begin(), expected.end(), h)) {
            if (carried != nullptr && failure.isOk()) failure = carried->referrer(key, findings);
            return;
          }
          match(key, key);
          return;
        }
        seqs.clear();
        if (!decodeRecordEntry(first, value, seqs)) {
          findings.atKey(format::kObjectIndexFamily, key,
                         "object index entry's later seqs do not decode");
          return;
        }
        for (const std::uint64_t seq : seqs) {
          recordKey.clear();
          format::appendObjectRecordKey(recordKey, objectKey, seq);
          if (!match(key, recordKey)) return;
        }
      });
  if (!st.isOk() || !failure.isOk() || findings.any()) return st.isOk() ? failure : st;
  if (carried != nullptr) {
    if (st = carried->finishReferrers(findings); !st.isOk() || findings.any()) return st;
  }
  if (std::find(matched.begin(), matched.end(), 0) == matched.end()) return Status::ok();
  // Name the first record whose entry is missing.
  std::vector<std::string> keys;
  return ledger.scanProjections(
      ledger.firstSeq(), ledger.lastSeq(),
      [&](std::uint64_t seq, schema::ProjectedRecord::Reader r) {
        keys.clear();
        appendObjectIndexKeys(seq, r, keys);
        for (const auto& k : keys) {
          const std::uint64_t h = XXH3_64bits(k.data(), k.size());
          const auto at = std::lower_bound(expected.begin(), expected.end(), h);
          if (matched[static_cast<std::size_t>(at - expected.begin())] == 0) {
            findings.atSeq(seq, "its object index entry " + Findings::printable(k) +
                                    " is missing (`ledger-replay rebuild-projection` derives "
                                    "the index again)");
            return false;
          }
        }
        return true;
      });
}

}  // namespace

Status verifyLog(const Ledger& ledger, VerifyReport* report, const VerifyOptions& options) {
  *report = VerifyReport{};
  const std::uint64_t head = ledger.lastSeq();
  const std::uint64_t first = ledger.firstSeq();
  bool indexComplete = false;
  if (Status st = ledger.objectIndexComplete(&indexComplete); !st.isOk()) return st;
  // What the log says the derived families hold, gathered in one scan.
  verify_scan::LogScan scan;
  if (Status st = verify_scan::scanLog(ledger, options, indexComplete, &scan); !st.isOk())
    return st;
  Findings& findings = scan.findings;
  // The entries the cut kept of the archived records, checked against the
  // archive when it is given.
  std::unique_ptr<CarriedEntries> carried;
  if (options.archive != nullptr && ledger.archiveCut()) {
    carried = std::make_unique<CarriedEntries>(ledger, *options.archive, options);
  }
  report->recordsChecked = scan.recordsChecked;
  report->lastSeq = scan.lastSeq;
  if (!findings.any() && head != 0 && scan.lastHash != ledger.lastHash()) {
    findings.atSeq(head, "head hash does not match the last record");
  }
  // The time index is checked up to the last record read (an earlier missing
  // entry is the first bad seq); the families whose expected content depends
  // on every record, only when all of them are sound.
  Status st = checkTimeIndex(ledger, scan.times, first, head, !findings.any(), findings);
  if (!st.isOk()) return st;
  if (!findings.any()) {
    st = checkEvents(ledger, std::move(scan.dedupe), std::move(scan.legacyDedupe), head, options,
                     carried.get(), findings);
    if (!st.isOk()) return st;
    if (st = checkLive(ledger, scan.live, carried.get(), findings); !st.isOk()) return st;
  }
  if (!findings.any() && indexComplete) {
    st = checkObjectIndex(ledger, std::move(scan.indexKeys), carried.get(), findings);
    if (!st.isOk()) return st;
  }
  findings.into(*report);
  report->lastHashHex = toHex(scan.lastHash);
  return Status::ok();
}

}  // namespace ledger
