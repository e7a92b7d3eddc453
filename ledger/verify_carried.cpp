#include "ledger/internal/verify_carried.h"

#include <xxhash.h>

#include <algorithm>
#include <optional>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/object_index.h"

namespace ledger::verify_scan {

namespace {

std::uint64_t hashOf(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

// The archive's value at `key`, nullopt when it has none.
Status lookUp(const Ledger& ledger, const char* family, std::string_view key,
              std::optional<std::string>* value) {
  std::string bytes;
  Status st = ledger.getRaw(family, std::string(key), &bytes);
  if (st.isNotFound()) {
    value->reset();
    return Status::ok();
  }
  if (st.isOk()) *value = std::move(bytes);
  return st;
}

}  // namespace

CarriedEntries::CarriedEntries(const Ledger& live, const Ledger& archive,
                               const VerifyOptions& options)
    : live_(live), archive_(archive), options_(options) {}

Status CarriedEntries::event(std::string_view key, std::uint64_t seq, Findings& findings) {
  std::optional<std::string> archived;
  if (Status st = lookUp(archive_, format::kEventsFamily, key, &archived); !st.isOk()) return st;
  bool formed = archived && *archived == format::seqKey(seq);
  // A key of an earlier build's format (VerifyOptions::legacyDedupeKeys):
  // the archive holds this build's key for the record, so the record itself
  // says whether it formed this one.
  if (!formed && options_.legacyDedupeKeys) {
    Record record;
    if (Status st = archive_.read(seq, &record); !st.isOk() && !st.isNotFound()) return st;
    if (record.seq == seq) {
      for (const std::string& legacy : options_.legacyDedupeKeys(record)) formed |= legacy == key;
    }
  }
  if (!formed) {
    findings.atKey(format::kEventsFamily, key,
                   "dedupe key names archived seq " + std::to_string(seq) +
                       ", whose record in the archive does not form it");
    return Status::ok();
  }
  keptEvents_.push_back({hashOf(key), seq});
  return Status::ok();
}

void CarriedEntries::laterEvent(std::string_view key) { laterEvents_.push_back(hashOf(key)); }

Status CarriedEntries::finishEvents(Findings& findings) {
  std::sort(keptEvents_.begin(), keptEvents_.end());
  std::sort(laterEvents_.begin(), laterEvents_.end());
  auto kept = [&](std::string_view key, std::uint64_t seq) {
    return std::binary_search(keptEvents_.begin(), keptEvents_.end(), KeyedSeq{hashOf(key), seq});
  };
  Status failure = Status::ok();
  Status st = archive_.scanRaw(format::kEventsFamily, [&](std::string_view key,
                                                          std::string_view value) {
    if (findings.any() || !failure.isOk() || value.size() != 8) return;
    const std::uint64_t seq = format::decodeU64(value);
    // A later record formed the key again: the live ledger's own check
    // proves the key names it.
    if (kept(key, seq) || std::binary_search(laterEvents_.begin(), laterEvents_.end(), hashOf(key)))
      return;
    // Kept in an earlier build's format, as the live ledger was written.
    if (options_.legacyDedupeKeys) {
      Record record;
      failure = archive_.read(seq, &record);
      if (!failure.isOk()) return;
      for (const std::string& legacy : options_.legacyDedupeKeys(record)) {
        if (kept(legacy, seq)) return;
      }
    }
    findings.atKey(format::kEventsFamily, key,
                   "the dedupe key of archived seq " + std::to_string(seq) +
                       " is missing from the live ledger (a relist would record that version "
                       "again)");
  });
  return st.isOk() ? failure : st;
}

Status CarriedEntries::liveEntry(std::string_view key, std::string_view value, Findings& findings) {
  std::optional<std::string> archived;
  if (Status st = lookUp(archive_, format::kLiveFamily, key, &archived); !st.isOk()) return st;
  if (!archived) {
    findings.atKey(format::kLiveFamily, key,
                   "live entry for an object no record, live or archived, leaves live");
    return Status::ok();
  }
  // The archive wrote the digest where the ingester keeps one; an entry of
  // a build before digests has none, and is accepted as checkLive accepts it.
  LiveObject kept, expected;
  decodeLive(value, &kept);
  decodeLive(*archived, &expected);
  if (kept.uid != expected.uid || kept.resourceVersion != expected.resourceVersion ||
      (kept.contentHash && kept.contentHash != expected.contentHash)) {
    findings.atKey(format::kLiveFamily, key,
                   "live entry of an object whose last record is archived is not that record's "
                   "(uid, resourceVersion or digest differ from the archive's)");
  }
  return Status::ok();
}

Status CarriedEntries::finishLive(const std::unordered_map<std::string, LiveExpectation>& described,
                                  Findings& findings) {
  Status failure = Status::ok();
  Status st = archive_.scanRaw(format::kLiveFamily, [&](std::string_view key, std::string_view) {
    if (findings.any() || !failure.isOk() || described.contains(std::string(key))) return;
    std::optional<std::string> kept;
    failure = lookUp(live_, format::kLiveFamily, key, &kept);
    if (failure.isOk() && !kept) {
      findings.atKey(format::kLiveFamily, key,
                     "the live entry of an object whose last record is archived is missing "
                     "(ingest would take its next version for a new object)");
    }
  });
  return st.isOk() ? failure : st;
}

Status CarriedEntries::referrer(std::string_view key, Findings& findings) {
  std::optional<std::string> archived;
  if (Status st = lookUp(archive_, format::kObjectIndexFamily, key, &archived); !st.isOk())
    return st;
  if (!archived) {
    findings.atKey(format::kObjectIndexFamily, key,
                   "object index entry that no record, live or archived, forms");
  }
  return Status::ok();
}

Status CarriedEntries::finishReferrers(Findings& findings) {
  bool complete = false;
  if (Status st = archive_.objectIndexComplete(&complete); !st.isOk() || !complete) return st;
  Status failure = Status::ok();
  Status st =
      archive_.scanRaw(format::kObjectIndexFamily, [&](std::string_view key, std::string_view) {
        std::string_view objectKey;
        std::uint64_t first = 0;
        if (findings.any() || !failure.isOk() || parseRecordEntryKey(key, &objectKey, &first))
          return;
        std::optional<std::string> kept;
        failure = lookUp(live_, format::kObjectIndexFamily, key, &kept);
        if (failure.isOk() && !kept) {
          findings.atKey(format::kObjectIndexFamily, key,
                         "an object index referrer key of the archived records is missing "
                         "(`ledger-replay rebuild-projection` derives the index again)");
        }
      });
  return st.isOk() ? failure : st;
}

}  // namespace ledger::verify_scan
