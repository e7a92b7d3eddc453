// Log records stored as deltas (format.h, kDeltaMarker): resolving one for a
// reader, and the cut's rewrite of those whose base leaves with the archive.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/internal/record_delta.h"
#include "ledger/ledger.h"

namespace ledger {

namespace {
Status badDelta(std::uint64_t seq, const std::string& what) {
  return Status::corruption("seq " + std::to_string(seq) + ": " + what);
}
}  // namespace

Status Ledger::resolveLogBody(std::uint64_t seq, std::string_view body,
                              const rocksdb::Snapshot* snapshot, RecentRecords* recent,
                              std::string* full, std::string_view* out) const {
  DeltaBody delta;
  if (!parseDeltaBody(body, &delta)) {
    *out = body;
    return Status::ok();
  }
  thread_local DeltaCodec codec;
  // The common case in a scan: the base was just passed.
  if (const std::string* kept = recent != nullptr ? recent->find(delta.baseSeq) : nullptr;
      kept != nullptr && delta.baseSeq < seq) {
    if (Status st = codec.decode(*kept, delta.frame, full); !st.isOk())
      return badDelta(seq, st.message());
    *out = *full;
    return Status::ok();
  }
  // Back along the bases to a full record (or one the scan kept), then the
  // frames forward from it.
  std::vector<std::string> frames{std::string(delta.frame)};
  std::string base;
  std::uint64_t at = seq;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  for (;;) {
    const std::uint64_t baseSeq = delta.baseSeq;
    // The writer's bounds (record_delta.h): a base outside them is damage,
    // and checking them bounds what a damaged record can make a reader read.
    if (baseSeq >= at || baseSeq + format::kDeltaWindow < at || baseSeq < firstSeq())
      return badDelta(seq, "a delta names record " + std::to_string(baseSeq) + " as its base");
    if (const std::string* kept = recent != nullptr ? recent->find(baseSeq) : nullptr) {
      base = *kept;
      break;
    }
    std::string value;
    auto s = db_->Get(ro, family(format::kLogFamily), format::seqKey(baseSeq), &value);
    if (!s.ok())
      return badDelta(seq, "the base of its delta, seq " + std::to_string(baseSeq) +
                               ", cannot be read: " + s.ToString());
    if (value.size() < format::kHashSize)
      return badDelta(seq,
                      "the base of its delta, seq " + std::to_string(baseSeq) + ", is truncated");
    const std::string_view baseBody = std::string_view(value).substr(format::kHashSize);
    if (!parseDeltaBody(baseBody, &delta)) {
      base.assign(baseBody);
      break;
    }
    if (frames.size() > format::kDeltaMaxDepth)
      return badDelta(seq, "its delta's bases are more than " +
                               std::to_string(format::kDeltaMaxDepth) + " deltas deep");
    frames.emplace_back(delta.frame);
    at = baseSeq;
  }
  std::string next;
  for (auto frame = frames.rbegin(); frame != frames.rend(); ++frame) {
    if (Status st = codec.decode(base, *frame, &next); !st.isOk())
      return badDelta(seq, st.message());
    base.swap(next);
  }
  *full = std::move(base);
  *out = *full;
  return Status::ok();
}

Status Ledger::rewriteDeltasAcrossCut(rocksdb::WriteBatch& wb, std::uint64_t cutSeq) const {
  // A base is at most kDeltaWindow seqs before its record: only the records
  // that close after the cut can name one that leaves. Each such record is
  // stored whole; later deltas on it still decode (it stands for the same
  // bytes).
  const std::uint64_t last = std::min(lastSeq(), cutSeq + format::kDeltaWindow);
  rocksdb::ReadOptions ro;
  std::string upper = format::seqKey(last + 1);
  rocksdb::Slice upperSlice(upper);
  ro.iterate_upper_bound = &upperSlice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, family(format::kLogFamily)));
  std::string full;
  for (it->Seek(format::seqKey(cutSeq + 1)); it->Valid(); it->Next()) {
    const std::string_view value = it->value().ToStringView();
    if (value.size() < format::kHashSize) continue;  // verify names it
    DeltaBody delta;
    if (!parseDeltaBody(value.substr(format::kHashSize), &delta) || delta.baseSeq > cutSeq)
      continue;
    const std::uint64_t seq = format::decodeU64(it->key().ToStringView());
    std::string_view bytes;
    if (Status st =
            resolveLogBody(seq, value.substr(format::kHashSize), nullptr, nullptr, &full, &bytes);
        !st.isOk())
      return st;
    std::string stored(value.substr(0, format::kHashSize));
    stored += bytes;
    wb.Put(family(format::kLogFamily), it->key(), stored);
  }
  return fromRocks(it->status(), "rewriting the deltas across the cut");
}

}  // namespace ledger
