#include <capnp/common.h>
#include <kj/exception.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <xxhash.h>

#include <cstdint>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/ledger.h"

namespace ledger {

namespace {

// A checkpoint chunk's header (format.h): XXH3-64 of the payload. A query
// checks a few MB of chunks; RocksDB's CRC32C (software in Debian's build)
// took a third of it, SHA-256 would take a tenth.
std::string chunkHeader(std::string_view payload) {
  return format::encodeU64(XXH3_64bits(payload.data(), payload.size()));
}

}  // namespace

Status Ledger::putCheckpoint(std::uint64_t seq, std::string_view bytes,
                             const std::vector<std::string>& chunks) {
  if (chunks.size() > UINT32_MAX) return Status::invalidArgument("putCheckpoint: too many chunks");
  rocksdb::WriteBatch wb;
  addCheckpoint(wb, seq, bytes, chunks);
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return fromRocks(db_->Write(wo, &wb), "writing checkpoint");
}

void Ledger::addCheckpoint(rocksdb::WriteBatch& wb, std::uint64_t seq, std::string_view bytes,
                           const std::vector<std::string>& chunks) const {
  // One batch: a checkpoint is never stored without the chunks it names.
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const std::string header = chunkHeader(chunks[i]);
    const rocksdb::Slice parts[] = {header, chunks[i]};
    const std::string key = format::checkpointChunkKey(seq, static_cast<std::uint32_t>(i));
    const rocksdb::Slice keyPart(key);
    wb.Put(family(format::kCheckpointObjectsFamily), rocksdb::SliceParts(&keyPart, 1),
           rocksdb::SliceParts(parts, 2));
  }
  wb.Put(family(format::kCheckpointsFamily), format::seqKey(seq),
         rocksdb::Slice(bytes.data(), bytes.size()));
}

Status Ledger::readCheckpointChunks(
    const std::vector<CheckpointChunkId>& ids,
    const std::function<void(std::size_t, kj::ArrayPtr<const capnp::word>)>& fn) const {
  for (std::size_t i = 1; i < ids.size(); ++i) {
    if (!(ids[i - 1] < ids[i])) {
      return Status::invalidArgument("readCheckpointChunks: ids must ascend");
    }
  }
  if (ids.empty()) return Status::ok();
  auto* cf = family(format::kCheckpointObjectsFamily);
  if (cf == nullptr) return Status::notFound("ledger has no checkpoint chunks (format 1)");
  AlignedBuffer buffer;
  return lookUpSorted(
      *db_, cf, ids.size(), 64,
      [&](std::size_t i) { return format::checkpointChunkKey(ids[i].checkpointSeq, ids[i].chunk); },
      [&](std::size_t i, const rocksdb::Status& found, std::string_view value) {
        const std::string what = "checkpoint chunk " + std::to_string(ids[i].checkpointSeq) + "/" +
                                 std::to_string(ids[i].chunk);
        if (found.IsNotFound()) return Status::notFound(what + " is missing");
        if (!found.ok()) return fromRocks(found, "reading " + what);
        if (value.size() < format::kChunkHeaderSize || value.size() % sizeof(capnp::word) != 0) {
          return Status::corruption(what + " is not a whole number of words");
        }
        const std::string_view payload = value.substr(format::kChunkHeaderSize);
        if (chunkHeader(payload) != value.substr(0, format::kChunkHeaderSize)) {
          return Status::corruption(what + " fails its checksum");
        }
        try {
          fn(i, buffer.load(payload));
        } catch (const kj::Exception& e) {
          return Status::corruption(what + " does not decode: " + e.getDescription().cStr());
        }
        return Status::ok();
      });
}

Status Ledger::checkpointAtOrBefore(std::uint64_t seq, std::uint64_t* foundSeq,
                                    std::string* bytes) const {
  *foundSeq = 0;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kCheckpointsFamily)));
  it->SeekForPrev(format::seqKey(seq));
  if (it->Valid()) {
    *foundSeq = format::decodeU64(it->key().ToStringView());
    bytes->assign(it->value().data(), it->value().size());
  }
  return fromRocks(it->status(), "seeking checkpoint");
}

Status Ledger::scanCheckpoints(
    const std::function<bool(std::uint64_t, std::string_view)>& fn) const {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), family(format::kCheckpointsFamily)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!fn(format::decodeU64(it->key().ToStringView()), it->value().ToStringView())) break;
  }
  return fromRocks(it->status(), "scanning checkpoints");
}

Status Ledger::dropCheckpoints() {
  rocksdb::WriteBatch wb;
  wb.DeleteRange(family(format::kCheckpointsFamily), format::seqKey(0), format::seqKey(UINT64_MAX));
  if (auto* chunks = family(format::kCheckpointObjectsFamily); chunks != nullptr) {
    wb.DeleteRange(chunks, format::seqKey(0), format::checkpointChunkKey(UINT64_MAX, UINT32_MAX));
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync;
  return fromRocks(db_->Write(wo, &wb), "dropping checkpoints");
}

}  // namespace ledger
