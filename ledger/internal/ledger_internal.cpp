#include "ledger/internal/ledger_internal.h"

#include <cerrno>
#include <cstring>

namespace ledger {

std::string encodeLive(const PendingRecord& p) {
  std::string out = p.identity.uid + '\0' + p.identity.resourceVersion;
  if (p.contentHash) {
    out.push_back('\0');
    out.append(reinterpret_cast<const char*>(p.contentHash->data()), p.contentHash->size());
  }
  return out;
}

void decodeLive(std::string_view value, LiveObject* out) {
  // uid and resourceVersion never hold a NUL; the digest may, so it is
  // whatever follows the second one.
  const auto uidEnd = value.find('\0');
  out->uid = std::string(value.substr(0, uidEnd));
  out->resourceVersion.clear();
  out->contentHash.reset();
  if (uidEnd == std::string_view::npos) return;
  const std::string_view rest = value.substr(uidEnd + 1);
  const auto rvEnd = rest.find('\0');
  out->resourceVersion = std::string(rest.substr(0, rvEnd));
  if (rvEnd == std::string_view::npos) return;
  const std::string_view hash = rest.substr(rvEnd + 1);
  if (hash.size() != std::tuple_size_v<Digest>) return;  // not one this build wrote
  Digest d;
  std::memcpy(d.data(), hash.data(), d.size());
  out->contentHash = d;
}

Status fromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::ok();
  if (s.IsNotFound()) return Status::notFound(what + ": " + s.ToString());
  if (s.IsCorruption()) return Status::corruption(what + ": " + s.ToString());
  // RocksDB reports EACCES as an I/O error with strerror's text and no
  // subcode of its own (env/io_posix.h, IOError). First: a LOCK file this
  // user may not open is not a lock another process holds.
  if (s.IsIOError() && s.ToString().find(std::strerror(EACCES)) != std::string::npos) {
    return Status::permissionDenied(what + ": " + s.ToString());
  }
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
  // The keys of one call are scattered over the history and read once: a
  // batch reads each block it needs once, and a later call rarely wants the
  // same block again. Kept out of the block cache, the blocks' memory is
  // reused from one batch to the next instead of growing the process, which
  // a command-line question pays for in page faults.
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  for (std::size_t start = 0; start < count; start += batch) {
    const std::size_t n = std::min(batch, count - start);
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = key(start + i);
      slices[i] = keys[i];
      values[i].Reset();
    }
    db.MultiGet(ro, family, n, slices.data(), values.data(), statuses.data(),
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
