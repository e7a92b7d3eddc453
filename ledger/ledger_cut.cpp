// The cut (ledger.h, cutArchived; format.h, "archive-cut"): the live ledger
// after `ledger-replay archive` moved its first records to a sealed archive.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "ledger/format.h"
#include "ledger/internal/ledger_internal.h"
#include "ledger/ledger.h"
#include "ledger/object_index.h"

namespace ledger {

// Named, not anonymous: the unity build compiles the library as one unit.
namespace ledger_cut {

constexpr std::size_t kMarkerFixedSize = 8 + format::kHashSize + 8 + 8;

std::string encodeMarker(const ArchiveCut& cut) {
  std::string out = format::encodeU64(cut.seq);
  out.append(reinterpret_cast<const char*>(cut.hash.data()), cut.hash.size());
  format::appendU64(out, static_cast<std::uint64_t>(cut.timeNs));
  format::appendU64(out, static_cast<std::uint64_t>(cut.firstTimeNs));
  out.append(cut.archiveDir);
  return out;
}

}  // namespace ledger_cut

Status Ledger::loadArchiveCut() {
  std::string value;
  Status st = getRaw(format::kMetaFamily, format::kArchiveCutKey, &value);
  if (st.isNotFound()) return Status::ok();
  if (!st.isOk()) return st;
  if (value.size() < ledger_cut::kMarkerFixedSize) {
    return Status::corruption("ledger " + dir_ + ": the cut marker (meta " +
                              std::string(format::kArchiveCutKey) + ") is malformed");
  }
  ArchiveCut cut;
  cut.seq = format::decodeU64(value);
  std::memcpy(cut.hash.data(), value.data() + 8, format::kHashSize);
  cut.timeNs = static_cast<std::int64_t>(
      format::decodeU64(std::string_view(value).substr(8 + format::kHashSize)));
  cut.firstTimeNs = static_cast<std::int64_t>(
      format::decodeU64(std::string_view(value).substr(16 + format::kHashSize)));
  cut.archiveDir = value.substr(ledger_cut::kMarkerFixedSize);
  std::lock_guard lock(cutMu_);
  cutSeq_.store(cut.seq, std::memory_order_release);
  cut_ = std::move(cut);
  return Status::ok();
}

std::optional<ArchiveCut> Ledger::archiveCut() const {
  std::lock_guard lock(cutMu_);
  return cut_;
}

Status Ledger::refusedBeforeCut(const std::string& what) const {
  const std::optional<ArchiveCut> cut = archiveCut();
  return Status::invalidArgument(
      what + " is before the cut: records 1.." + std::to_string(cut ? cut->seq : 0) +
      " were moved to the archive " + (cut ? cut->archiveDir : std::string()) +
      " (ledger-replay archive); ledger-query and ledger-replay answer a moment before the cut "
      "with --archive " +
      (cut ? cut->archiveDir : std::string()));
}

Status Ledger::cutObjectIndex(rocksdb::WriteBatch& wb, std::uint64_t seq) const {
  auto* cf = family(format::kObjectIndexFamily);
  if (cf == nullptr) return Status::ok();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf));
  std::vector<std::uint64_t> seqs;
  for (it->Seek("r"); it->Valid() && it->key().starts_with("r"); it->Next()) {
    std::string_view objectKey;
    std::uint64_t first = 0;
    const std::string_view key = it->key().ToStringView();
    if (!parseRecordEntryKey(key, &objectKey, &first) || first > seq) continue;
    seqs.clear();
    if (!decodeRecordEntry(first, it->value().ToStringView(), seqs)) {
      return Status::corruption("object index entry of " + std::string(objectKey) + " at seq " +
                                std::to_string(first) + " does not decode");
    }
    wb.Delete(cf, it->key());
    // An entry lists the object's later records of one batch (format.h):
    // those after the cut stay listed, under the first of them.
    const auto kept = std::find_if(seqs.begin(), seqs.end(), [&](auto s) { return s > seq; });
    if (kept == seqs.end()) continue;
    std::string value;
    appendLaterRecordSeqs(value, *kept, std::span<const std::uint64_t>(kept + 1, seqs.end()));
    wb.Put(cf, format::objectRecordKey(objectKey, *kept), value);
  }
  return fromRocks(it->status(), "scanning the object index for the cut");
}

Status Ledger::cutArchived(const ArchiveCut& cut, std::string_view checkpoint,
                           const std::vector<std::string>& chunks) {
  // A later cut moves the cut on into the same archive (extended first,
  // archive.h extendArchive): one archive holds every record before it.
  if (const std::optional<ArchiveCut> was = archiveCut();
      was && (cut.seq <= was->seq || cut.archiveDir != was->archiveDir)) {
    return Status::invalidArgument("ledger " + dir_ + " was cut already at seq " +
                                   std::to_string(was->seq) + " (archive " + was->archiveDir +
                                   "); a later cut must be after it, into the same archive");
  }
  // lastSeq(), not head_: the --watch daemon cuts beside its appender.
  if (cut.seq == 0 || cut.seq >= lastSeq()) {
    return Status::invalidArgument("cut at seq " + std::to_string(cut.seq) +
                                   ": the live ledger must keep at least its last record (1.." +
                                   std::to_string(lastSeq()) + ")");
  }
  std::string stored;
  if (Status st = getRaw(format::kLogFamily, format::seqKey(cut.seq), &stored); !st.isOk())
    return st;
  if (stored.size() < format::kHashSize ||
      std::memcmp(stored.data(), cut.hash.data(), format::kHashSize) != 0) {
    return Status::invalidArgument("cut at seq " + std::to_string(cut.seq) +
                                   ": the archive's hash is not the ledger's at that seq");
  }
  {
    // From the next append on, no record is stored against one that leaves;
    // the records committed until then are rewritten below if they are.
    std::lock_guard appendLock(appendMu_);
    if (deltaFloor_.load(std::memory_order_relaxed) < cut.seq)
      deltaFloor_.store(cut.seq, std::memory_order_release);
  }
  rocksdb::WriteBatch wb;
  const std::string end = format::seqKey(cut.seq + 1);
  wb.DeleteRange(family(format::kLogFamily), format::seqKey(0), end);
  if (Status st = rewriteDeltasAcrossCut(wb, cut.seq); !st.isOk()) return st;
  wb.DeleteRange(family(format::kProjectionFamily), format::seqKey(0), end);
  // Times never go backwards along the seqs (append raises them), so the
  // records up to the cut are exactly the time keys before this one.
  wb.DeleteRange(family(format::kTimeIndexFamily), std::string(),
                 format::timeKey(cut.timeNs, cut.seq + 1));
  if (Status st = cutObjectIndex(wb, cut.seq); !st.isOk()) return st;
  // Every other checkpoint goes: those before the cut fold records that
  // leave, later ones may name copies earlier ones made.
  wb.DeleteRange(family(format::kCheckpointsFamily), format::seqKey(0), format::seqKey(UINT64_MAX));
  wb.DeleteRange(family(format::kCheckpointObjectsFamily), format::seqKey(0),
                 format::checkpointChunkKey(UINT64_MAX, UINT32_MAX));
  addCheckpoint(wb, cut.seq, checkpoint, chunks);
  // The held levels stored up to the cut describe records that leave; the
  // rollups' buckets and stored wait hours stay (every whole hour is still
  // answered). So do the wait follower's states from the cut on: the one at
  // the cut, which the caller carried (replay/kueue/wait_store.h), is where
  // a pass over the records after it starts.
  if (auto* rollups = family(format::kUsageRollupsFamily); rollups != nullptr) {
    for (const char kind : {format::kHeldChanges, format::kHeldSnapshot, format::kHeldRunEnd}) {
      wb.DeleteRange(rollups, format::heldRecordKey(kind, 0),
                     format::heldRecordKey(kind, cut.seq + 1));
    }
    wb.DeleteRange(rollups, format::waitStateKey(0), format::waitStateKey(cut.seq));
  }
  auto* meta = family(format::kMetaFamily);
  wb.Put(meta, rocksdb::Slice(format::kArchiveCutKey.data(), format::kArchiveCutKey.size()),
         ledger_cut::encodeMarker(cut));
  wb.Put(meta, rocksdb::Slice(format::kFormatKey.data(), format::kFormatKey.size()),
         std::to_string(format::kCurrentFormat));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  if (Status st = fromRocks(db_->Write(wo, &wb), "cutting the ledger"); !st.isOk()) return st;
  {
    std::lock_guard lock(cutMu_);
    cutSeq_.store(cut.seq, std::memory_order_release);
    cut_ = cut;
  }
  // Opened for writing, the ledger was upgraded already (a cut ledger is
  // this format): written only when it changes, as readers may look.
  if (formatVersion_ != format::kCurrentFormat) formatVersion_ = format::kCurrentFormat;
  return Status::ok();
}

}  // namespace ledger
