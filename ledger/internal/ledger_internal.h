// What the ledger's own sources (ledger*.cpp) share: the column families,
// RocksDB status translation, aligned reads and batched point lookups. Not
// part of the public interface; nothing outside ledger/ includes it.
//
// Thread safety: the helpers hold no state; an AlignedBuffer belongs to one
// thread at a time.
#pragma once

#include <capnp/common.h>
#include <kj/array.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/format.h"
#include "ledger/internal/live_writer.h"
#include "ledger/ledger.h"
#include "ledger/status.h"

namespace ledger {

// Every column family a current ledger has, in the order they are opened.
inline const char* const kFamilyNames[] = {
    "default",
    format::kLogFamily,
    format::kProjectionFamily,
    format::kTimeIndexFamily,
    format::kEventsFamily,
    format::kLiveFamily,
    format::kCheckpointsFamily,
    format::kCheckpointObjectsFamily,
    format::kObjectIndexFamily,
    format::kUsageRollupsFamily,
    format::kMetaFamily,
};

struct Ledger::Families {
  std::map<std::string, rocksdb::ColumnFamilyHandle*, std::less<>> byName;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  // The database's and the log family's options together, as a table file
  // written for the log family must be built (log_table.h).
  rocksdb::Options logTableOptions;
  // A writer's directory for readers of this process (live_writer.h); held
  // until the database is closed, as ~Ledger closes it before its members go.
  WriterRegistration writer;
  // A reader's table files, all opened with the database (databaseOptions).
  TableFileReservation pinnedTables;
};

// The options the ledger opens the named column family with, for a writer
// (`writable`) or a reader: they differ only in memory, never on disk.
rocksdb::ColumnFamilyOptions familyOptions(const std::string& name, bool writable);

// A `live` value (format.h) for the record `p`, and back. decodeLive reads
// values written before content hashes were kept as having none.
std::string encodeLive(const PendingRecord& p);
void decodeLive(std::string_view value, LiveObject* out);

// The ledger's Status for a RocksDB status, `what` naming the operation.
Status fromRocks(const rocksdb::Status& s, const std::string& what);

// Cap'n Proto wants word-aligned input; RocksDB slices have no alignment.
class AlignedBuffer {
 public:
  kj::ArrayPtr<const capnp::word> load(std::string_view bytes) {
    const std::size_t words = (bytes.size() + sizeof(capnp::word) - 1) / sizeof(capnp::word);
    if (words_.size() < words) {
      words_ = kj::heapArray<capnp::word>(std::max(words, words_.size() * 2));
    }
    if (!bytes.empty()) std::memcpy(words_.begin(), bytes.data(), bytes.size());
    return kj::arrayPtr(words_.begin(), bytes.size() / sizeof(capnp::word));
  }

 private:
  kj::Array<capnp::word> words_;  // capnp::word is not copyable: no std::vector
};

// Point lookups of `count` keys (ascending) in batches of `batch`, each
// answered in order by value(i, status, bytes); stops at the first failure
// it returns. MultiGet, not an iterator: a point lookup consults only the
// one table file whose range holds the key, where an iterator's Seek
// positions every level. Batches bound the pinned blocks; the blocks read
// are not kept in the block cache.
Status lookUpSorted(
    rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, std::size_t count, std::size_t batch,
    const std::function<std::string(std::size_t)>& key,
    const std::function<Status(std::size_t, const rocksdb::Status&, std::string_view)>& value);

}  // namespace ledger
