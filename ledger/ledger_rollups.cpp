// The usage_rollups family (format.h): stored and read as checksummed
// Cap'n Proto payloads; what they hold is replay/kueue/usage_rollups.h's.
#include <capnp/common.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <xxhash.h>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/ledger.h"

namespace ledger {

namespace {

// XXH3-64 as for checkpoint chunks: a report reads a few hundred buckets,
// and a damaged one must read as damaged, never as a smaller usage.
std::string rollupHeader(std::string_view payload) {
  return format::encodeU64(XXH3_64bits(payload.data(), payload.size()));
}

std::string describeKey(std::string_view key) {
  if (key.size() != format::kUsageRollupKeySize) return "usage rollup with a malformed key";
  if (key[0] == format::kHeldChanges || key[0] == format::kHeldSnapshot ||
      key[0] == format::kHeldRunEnd) {
    return std::string("held levels ") + key[0] + "/seq " +
           std::to_string(format::heldRecordSeq(key));
  }
  return std::string("usage rollup ") + key[0] + "/" +
         std::to_string(format::usageRollupStart(key));
}

}  // namespace

Status Ledger::putUsageRollups(const std::map<std::string, std::string>& buckets) {
  auto* cf = family(format::kUsageRollupsFamily);
  if (cf == nullptr) return Status::invalidArgument("ledger has no usage_rollups family");
  rocksdb::WriteBatch wb;
  for (const auto& [key, payload] : buckets) {
    const std::string header = rollupHeader(payload);
    const rocksdb::Slice parts[] = {header, payload};
    const rocksdb::Slice keyPart(key);
    wb.Put(cf, rocksdb::SliceParts(&keyPart, 1), rocksdb::SliceParts(parts, 2));
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return fromRocks(db_->Write(wo, &wb), "writing usage rollups");
}

Status Ledger::scanUsageRollups(
    std::string_view from, std::string_view to,
    const std::function<bool(std::string_view, kj::ArrayPtr<const capnp::word>)>& fn) const {
  auto* cf = family(format::kUsageRollupsFamily);
  if (cf == nullptr) return Status::ok();
  rocksdb::ReadOptions ro;
  const rocksdb::Slice upper(to.data(), to.size());
  ro.iterate_upper_bound = &upper;
  // A question reads a range of rollups or held levels once, in order: kept
  // out of the block cache, each block's memory is reused for the next
  // instead of growing the process, which it pays for in page faults (as
  // ledger_internal.cpp's MultiGet does).
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf));
  AlignedBuffer buffer;
  for (it->Seek(rocksdb::Slice(from.data(), from.size())); it->Valid(); it->Next()) {
    const std::string_view key = it->key().ToStringView();
    const std::string_view value = it->value().ToStringView();
    if (value.size() < format::kChunkHeaderSize ||
        (value.size() - format::kChunkHeaderSize) % sizeof(capnp::word) != 0) {
      return Status::corruption(describeKey(key) + " is not a whole number of words");
    }
    const std::string_view payload = value.substr(format::kChunkHeaderSize);
    if (rollupHeader(payload) != value.substr(0, format::kChunkHeaderSize)) {
      return Status::corruption(describeKey(key) + " fails its checksum");
    }
    if (!fn(key, buffer.load(payload))) break;
  }
  return fromRocks(it->status(), "scanning usage rollups");
}

Status Ledger::lastUsageRollup(char grain, std::string* key) const {
  key->clear();
  auto* cf = family(format::kUsageRollupsFamily);
  if (cf == nullptr) return Status::ok();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf));
  it->SeekForPrev(std::string(1, grain) + std::string(8, '\xff'));
  if (it->Valid() && !it->key().empty() && it->key()[0] == grain) {
    key->assign(it->key().data(), it->key().size());
  }
  return fromRocks(it->status(), "seeking usage rollups");
}

Status Ledger::usageRollupAtOrBefore(std::string_view bound, std::string* key) const {
  key->clear();
  auto* cf = family(format::kUsageRollupsFamily);
  if (cf == nullptr || bound.empty()) return Status::ok();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf));
  it->SeekForPrev(rocksdb::Slice(bound.data(), bound.size()));
  if (it->Valid() && !it->key().empty() && it->key()[0] == bound[0]) {
    key->assign(it->key().data(), it->key().size());
  }
  return fromRocks(it->status(), "seeking usage rollups");
}

Status Ledger::dropUsageRollups() {
  auto* cf = family(format::kUsageRollupsFamily);
  if (cf == nullptr) return Status::ok();
  rocksdb::WriteBatch wb;
  wb.DeleteRange(cf, std::string(1, '\0'), std::string(1, '\xff'));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return fromRocks(db_->Write(wo, &wb), "dropping usage rollups");
}

}  // namespace ledger
