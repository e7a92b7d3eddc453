// Reads the records that hold a set of object versions (by seq) into
// StoredObjects, on two threads: a helper starts at once from the front of
// the set, and the caller joins in from the back when it calls finish().
//
// Why: a point-in-time query restores a checkpoint that names about two
// thousand objects by seq, scattered over the whole history, and reading
// them - a point lookup and a block decompression each - is most of the
// query. The helper reads while the caller folds the records after the
// checkpoint; the few objects that fold replaces were read for nothing and
// are dropped by ClusterState::adopt. Versions a checkpoint copied
// (ObjectRef::copy) are read from their chunks, several to a lookup.
//
// Ownership: borrows the Ledger (which must outlive this) and owns the
// helper thread, which the destructor stops and joins. Not thread-safe
// itself: one owner calls finish(). Errors: finish() returns the first
// failed read's status (a missing seq or chunk is NotFound, a record or
// chunk that does not decode, or a chunk without the version named,
// Corruption); objects of seqs not read stay null.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ledger/ledger.h"
#include "replay/fold/cluster_state.h"

namespace ledger::replay {

class ObjectReads {
 public:
  // `refs` ascending by seq. With `helper` false, everything is read in finish().
  ObjectReads(const Ledger& ledger, std::vector<ObjectRef> refs, bool helper);
  // Every seq (ascending) from the projection family.
  ObjectReads(const Ledger& ledger, const std::vector<std::uint64_t>& seqs, bool helper);
  ~ObjectReads();
  ObjectReads(const ObjectReads&) = delete;
  ObjectReads& operator=(const ObjectReads&) = delete;

  // Reads what is left on this thread beside the helper; joins it.
  [[nodiscard]] Status finish();

  const std::vector<std::uint64_t>& seqs() const { return seqs_; }
  // objects()[i] holds the version at seqs()[i] once finish() succeeded.
  std::vector<std::unique_ptr<StoredObject>>& objects() { return objects_; }

 private:
  // A share of the work: up to kProjectionBatch records from the projection
  // family, or up to kChunkBatch chunks with the versions wanted from each.
  struct Unit {
    std::vector<std::size_t> slots;                // projection: indices into seqs_
    std::vector<CheckpointChunkId> ids;            // chunks: ascending
    std::vector<std::vector<std::size_t>> wanted;  // per chunk: indices into seqs_
  };
  static constexpr std::size_t kProjectionBatch = 64;
  static constexpr std::size_t kChunkBatch = 8;

  void plan(const std::vector<ObjectRef>& refs);
  void start(bool helper);
  // Takes the next unit from the front (helper) or the back (caller);
  // false when nothing is left or a read failed.
  bool takeFront(std::size_t* unit);
  bool takeBack(std::size_t* unit);
  Status read(const Unit& unit);
  Status readChunks(const Unit& unit);
  void fail(Status st);
  void joinHelper();

  const Ledger& ledger_;
  std::vector<std::uint64_t> seqs_;
  std::vector<std::unique_ptr<StoredObject>> objects_;
  std::vector<Unit> units_;
  std::mutex mu_;
  std::size_t front_ = 0;  // units [front_, back_) are still to read
  std::size_t back_ = 0;
  Status failure_;  // the first failed read, under mu_
  std::thread helper_;
};

}  // namespace ledger::replay
