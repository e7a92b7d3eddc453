#include "ledger_internal.h"

namespace ledger {

Status fromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::ok();
  if (s.IsNotFound()) return Status::notFound(what + ": " + s.ToString());
  if (s.IsCorruption()) return Status::corruption(what + ": " + s.ToString());
  if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
    return Status::busy(what + ": another process holds the ledger (" + s.ToString() + ")");
  }
  return Status::ioError(what + ": " + s.ToString());
}

Status lookUpSorted(
    rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, std::size_t count, std::size_t batch,
    const std::function<std::string(std::size_t)>& key,
    const std::function<Status(std::size_t, const rocksdb::Status&, std::string_view)>& value) {
  std::vector<std::string> keys(std::min(count, batch));
  std::vector<rocksdb::Slice> slices(keys.size());
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  for (std::size_t start = 0; start < count; start += batch) {
    const std::size_t n = std::min(batch, count - start);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = key(start + i);
      slices[i] = keys[i];
      values[i].Reset();
    }
    db.MultiGet(rocksdb::ReadOptions(), family, n, slices.data(), values.data(), statuses.data(),
                /*sorted_input=*/true);
    for (std::size_t i = 0; i < n; ++i) {
      if (Status st = value(start + i, statuses[i], values[i].ToStringView()); !st.isOk()) {
        return st;
      }
    }
  }
  return Status::ok();
}

}  // namespace ledger
