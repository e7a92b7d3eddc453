#include "ledger/verify.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <xxhash.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
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

// The problem verifyLog reports: the lowest bad seq found by any check, else
// the first bad key of a family.
class Findings {
 public:
  void atSeq(std::uint64_t seq, std::string problem) {
    if (seq_ != 0 && seq_ <= seq) return;
    seq_ = seq;
    family_.clear();
    key_.clear();
    problem_ = std::move(problem);
  }
  void atKey(const char* family, std::string_view key, std::string problem) {
    if (any()) return;
    family_ = family;
    key_ = printable(key);
    problem_ = std::move(problem);
  }
  bool any() const { return seq_ != 0 || !family_.empty(); }
  void into(VerifyReport& report) const {
    report.firstBadSeq = seq_;
    report.badFamily = family_;
    report.badKey = key_;
    report.problem = problem_;
  }

  // Keys are bytes (dedupe keys hold NULs, time keys are binary).
  static std::string printable(std::string_view bytes) {
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

 private:
  std::uint64_t seq_ = 0;
  std::string family_;
  std::string key_;
  std::string problem_;
};

// A record's dedupe key, by its XXH3-64 (the keys themselves would hold the
// uid and resourceVersion of every record in memory), and its seq.
struct KeyedSeq {
  std::uint64_t keyHash = 0;
  std::uint64_t seq = 0;
  friend auto operator<=>(const KeyedSeq&, const KeyedSeq&) = default;
};

// What the live entry of an object should hold after its last record.
struct LiveExpectation {
  std::uint64_t seq = 0;
  std::string uid;
  std::string resourceVersion;
  // format.h: the digest of the record's JSON for an object without uid or
  // resourceVersion (PendingRecord::contentHash); none for the others.
  std::optional<Digest> contentHash;
  // The last record deletes the object: it has no live entry. Kept, not
  // erased, for a cut ledger, where an entry no record describes may be an
  // object whose last record is in the archive, but not one deleted since.
  bool deleted = false;
};

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
                   Findings& findings) {
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
        // relist does not record that version again; taken as the link is.
        if (seq < ledger.firstSeq()) {
          done = false;
          return;
        }
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
                 Findings& findings) {
  // A cut ledger keeps the live entries of objects whose last record the
  // archive holds: taken as the link is.
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
  Status st = ledger.scanRaw(format::kLiveFamily, [&](std::string_view key,
                                                      std::string_view value) {
    for (; next < wanted.size() && wanted[next]->first < key; ++next) missing(wanted[next]->second);
    if (next == wanted.size() || wanted[next]->first != key) {
      if (!cut) {
        findings.atKey(format::kLiveFamily, key, "live entry for an object no record leaves live");
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
  for (; next < wanted.size(); ++next) missing(wanted[next]->second);
  return Status::ok();
}

// object_index: exactly the keys the records' projections form (XXH3-64 of
// each, as the dedupe keys), a record entry standing for the per-record keys
// of every seq it lists, each listed once; referrer keys with an empty
// value. Checked only when the ledger says the index covers every record
// (format.h).
Status checkObjectIndex(const Ledger& ledger, std::vector<std::uint64_t> expected,
                        Findings& findings) {
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
  Status st =
      ledger.scanRaw(format::kObjectIndexFamily, [&](std::string_view key, std::string_view value) {
        if (findings.any()) return;
        std::string_view objectKey;
        std::uint64_t first = 0;
        if (!parseRecordEntryKey(key, &objectKey, &first)) {
          if (!value.empty()) {
            findings.atKey(format::kObjectIndexFamily, key, "object index entry holds a value");
            return;
          }
          // A referrer key may be formed by a record the archive holds only.
          const std::uint64_t h = XXH3_64bits(key.data(), key.size());
          if (ledger.archiveCut() && !std::binary_search(expected.begin(), expected.end(), h))
            return;
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
  if (!st.isOk() || findings.any()) return st;
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
  // A cut ledger starts from the link to its archive (ledger.h,
  // ArchiveCut), taken as verified as verifyChain takes its starting point;
  // `ledger-replay verify --archive` checks the archive up to it.
  const std::optional<ArchiveCut>& cut = ledger.archiveCut();
  const std::uint64_t first = ledger.firstSeq();
  Digest previous = cut ? cut->hash : Digest{};
  std::uint64_t expected = first;
  std::int64_t lastTime = cut ? cut->timeNs : INT64_MIN;
  Findings findings;
  auto fail = [&](std::uint64_t seq, std::string problem) {
    findings.atSeq(seq, std::move(problem));
    return false;
  };
  // What the log says the derived families hold, gathered in the one scan.
  std::vector<std::int64_t> times;  // times[seq - 1]
  times.reserve(head - first + 1);
  std::vector<KeyedSeq> dedupe;        // (XXH3 of the record's dedupe key, seq)
  std::vector<KeyedSeq> legacyDedupe;  // the same for keys of earlier builds
  std::unordered_map<std::string, LiveExpectation> live;
  bool indexComplete = false;
  if (Status st = ledger.objectIndexComplete(&indexComplete); !st.isOk()) return st;
  std::vector<std::uint64_t> indexKeys;  // XXH3 of the object_index keys
  std::vector<std::string> recordIndexKeys;
  AlignedBuffer indexBuffer;
  Sha256 chain;
  std::string projection;
  Status st = ledger.scanRecords(first, head, [&](const Record& r, const Digest& stored) {
    if (r.seq != expected) {
      // The key skipped ahead (a gap) or the stored seq disagrees with its key.
      return fail(expected, r.seq > expected
                                ? "sequence gap: next record stored is seq " + std::to_string(r.seq)
                                : "record holds seq " + std::to_string(r.seq));
    }
    const Digest computed = chainHash(previous, encodeRecord(r), chain);
    if (computed != stored) return fail(r.seq, "hash chain broken: stored hash does not match");
    if (r.timeNs < lastTime) return fail(r.seq, "event time goes backwards");
    if (!ledger.getRaw(format::kProjectionFamily, format::seqKey(r.seq), &projection).isOk()) {
      return fail(r.seq, "projection missing");
    }
    if (Status problem = checkProjection(projection, &r); !problem.isOk()) {
      return fail(r.seq,
                  problem.message() + " (`ledger-replay rebuild-projection` derives it again)");
    }
    // Reports are computed from the projection alone, and the chain covers
    // only the log: a projection that decodes and names its record can still
    // say 9Gi where the record's JSON says 8Gi. Derived again and compared
    // byte for byte, it is as trustworthy as the record.
    if (options.project && projection != buildProjectedRecord(r, options.project(r))) {
      // Which it is, only `meta` can prove: a ledger whose projections an
      // older projector wrote holds other bytes for the same JSON (format.h,
      // kProjectionFormat). The record is sound either way; the rebuild
      // derives its projection again.
      if (ledger.projectionFormat() < format::kProjectionFormat) {
        return fail(r.seq, "projection was written by an older projector (projection format " +
                               std::to_string(ledger.projectionFormat()) + ", this build's is " +
                               std::to_string(format::kProjectionFormat) +
                               "): run `ledger-replay rebuild-projection`");
      }
      return fail(r.seq,
                  "projection is not what the record's JSON projects to (edited, or projected "
                  "with another --kueue-config; `ledger-replay rebuild-projection` derives it "
                  "again)");
    }
    times.push_back(r.timeNs);
    if (options.dedupeKey) {
      const std::string key = options.dedupeKey(r);
      if (!key.empty()) dedupe.push_back({XXH3_64bits(key.data(), key.size()), r.seq});
    }
    if (options.legacyDedupeKeys) {
      for (const std::string& key : options.legacyDedupeKeys(r))
        legacyDedupe.push_back({XXH3_64bits(key.data(), key.size()), r.seq});
    }
    noteLive(r, live);
    if (indexComplete) {
      capnp::FlatArrayMessageReader reader(indexBuffer.load(projection));
      recordIndexKeys.clear();
      appendObjectIndexKeys(r.seq, reader.getRoot<schema::ProjectedRecord>(), recordIndexKeys);
      for (const auto& k : recordIndexKeys) indexKeys.push_back(XXH3_64bits(k.data(), k.size()));
    }
    previous = stored;
    lastTime = r.timeNs;
    report->recordsChecked++;
    report->lastSeq = r.seq;
    ++expected;
    if (options.progress) options.progress(r.seq, head);
    return true;
  });
  if (!st.isOk()) {
    if (!st.isCorruption()) return st;
    // Storage-level corruption (a bad block): the first seq not yet verified.
    if (!findings.any()) findings.atSeq(expected, st.message());
  }
  if (!findings.any()) {
    if (head != 0 && report->lastSeq != head) {
      findings.atSeq(std::max(report->lastSeq + 1, first),
                     "records end at seq " + std::to_string(report->lastSeq) +
                         " but the head says " + std::to_string(head));
    } else if (head != 0 && previous != ledger.lastHash()) {
      findings.atSeq(head, "head hash does not match the last record");
    }
  }
  // The time index is checked up to the last record read (an earlier missing
  // entry is the first bad seq); the families whose expected content depends
  // on every record, only when all of them are sound.
  if (st = checkTimeIndex(ledger, times, first, head, !findings.any(), findings); !st.isOk())
    return st;
  if (!findings.any()) {
    st = checkEvents(ledger, std::move(dedupe), std::move(legacyDedupe), head, options, findings);
    if (!st.isOk()) return st;
    if (st = checkLive(ledger, live, findings); !st.isOk()) return st;
  }
  if (!findings.any() && indexComplete) {
    if (st = checkObjectIndex(ledger, std::move(indexKeys), findings); !st.isOk()) return st;
  }
  findings.into(*report);
  report->lastHashHex = toHex(previous);
  return Status::ok();
}

}  // namespace ledger
