// The object index's and live view's writes of a batch (ledger_append.cpp:
// the append and the rebuild of the projection), grouped per object. Not
// part of the public interface; nothing outside ledger/ includes it.
//
// Value types; one thread at a time.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ledger/format.h"
#include "ledger/object_index.h"
#include "ledger/record.h"

namespace ledger {

// The objects a batch (or a stretch of the rebuild) touches and the seqs of
// each, for the object index and the live view: both are written once per
// object, not once per record, which is fewer and smaller writes into the
// batch, the write-ahead log and the memtables (a bulk import changes each
// object a couple of times per commit: docs/performance.md). Seqs must be
// noted in ascending order.
class BatchObjects {
 public:
  // Notes the record `seq` of the object whose key `key` holds.
  void note(std::string_view key, std::uint64_t seq) {
    auto at = slots_.find(key);
    if (at == slots_.end()) {
      at = slots_.emplace(std::string(key), static_cast<std::uint32_t>(keys_.size())).first;
      keys_.push_back(at->first);
    }
    slotOf_.push_back(at->second);
    seqs_.push_back(seq);
  }

  // Calls fn(objectKey, seqs) for each object in key order, its seqs
  // ascending, then forgets them all.
  template <typename Fn>
  void drain(Fn&& fn) {
    const std::size_t objects = keys_.size();
    // The seqs grouped by object (a counting sort keeps each object's in
    // order).
    start_.assign(objects + 1, 0);
    for (const std::uint32_t slot : slotOf_) ++start_[slot + 1];
    for (std::size_t i = 0; i < objects; ++i) start_[i + 1] += start_[i];
    grouped_.resize(seqs_.size());
    fill_.assign(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < seqs_.size(); ++i) grouped_[fill_[slotOf_[i]]++] = seqs_[i];
    order_.resize(objects);
    for (std::uint32_t i = 0; i < objects; ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(),
              [&](std::uint32_t a, std::uint32_t b) { return keys_[a] < keys_[b]; });
    for (const std::uint32_t slot : order_) {
      fn(keys_[slot], std::span<const std::uint64_t>(grouped_.data() + start_[slot],
                                                     start_[slot + 1] - start_[slot]));
    }
    slots_.clear();
    keys_.clear();
    slotOf_.clear();
    seqs_.clear();
  }

 private:
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, KeyHash, std::equal_to<>> slots_;
  std::vector<std::string_view> keys_;  // by slot, into slots_' keys
  std::vector<std::uint32_t> slotOf_;   // by noted record
  std::vector<std::uint64_t> seqs_;     // by noted record
  std::vector<std::size_t> start_, fill_;
  std::vector<std::uint64_t> grouped_;
  std::vector<std::uint32_t> order_;
};

// A batch's object_index writes (object_index.h, format.h), for the append
// and the rebuild: one record entry per object, and each referrer key once
// (an object names the same owner in every version).
struct IndexWrites {
  std::string objectKey;  // the last noted record's
  BatchObjects objects;
  std::vector<std::string> referrerKeys;
  std::string entryKey, entryValue;

  // Notes record `r` and leaves its object key in `objectKey`.
  void note(const Record& r) {
    objectKey.clear();
    r.identity.appendObjectKey(objectKey);
    objects.note(objectKey, r.seq);
  }
  // Puts the record entry of one object's seqs.
  void putRecordEntry(rocksdb::WriteBatch& wb, rocksdb::ColumnFamilyHandle* cf,
                      std::string_view key, std::span<const std::uint64_t> seqs) {
    entryKey.clear();
    format::appendObjectRecordKey(entryKey, key, seqs.front());
    entryValue.clear();
    appendLaterRecordSeqs(entryValue, seqs.front(), seqs.subspan(1));
    wb.Put(cf, entryKey, entryValue);
  }
  void putReferrerKeys(rocksdb::WriteBatch& wb, rocksdb::ColumnFamilyHandle* cf) {
    std::sort(referrerKeys.begin(), referrerKeys.end());
    referrerKeys.erase(std::unique(referrerKeys.begin(), referrerKeys.end()), referrerKeys.end());
    for (const std::string& k : referrerKeys) wb.Put(cf, k, rocksdb::Slice());
    referrerKeys.clear();
  }
  // The rebuild's: every noted object's record entry, then the referrers.
  void putAll(rocksdb::WriteBatch& wb, rocksdb::ColumnFamilyHandle* cf) {
    objects.drain([&](std::string_view key, std::span<const std::uint64_t> seqs) {
      putRecordEntry(wb, cf, key, seqs);
    });
    putReferrerKeys(wb, cf);
  }
};

}  // namespace ledger
