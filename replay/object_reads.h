// Reads the records that hold a set of object versions (by seq) into
// StoredObjects, on two threads: a helper starts at once from the front of
// the set, and the caller joins in from the back when it calls finish().
//
// Why: a point-in-time query restores a checkpoint that names about two
// thousand objects by seq, scattered over the whole history, and reading
// them - a point lookup and a block decompression each - is most of the
// query. The helper reads while the caller folds the records after the
// checkpoint; the few objects that fold replaces were read for nothing and
// are dropped by ClusterState::adopt.
//
// Ownership: borrows the Ledger (which must outlive this) and owns the
// helper thread, which the destructor stops and joins. Not thread-safe
// itself: one owner calls finish(). Errors: finish() returns the first
// failed read's status (a missing seq is NotFound, a record that does not
// decode Corruption); objects of seqs not read stay null.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cluster_state.h"
#include "ledger.h"

namespace ledger::replay {

class ObjectReads {
 public:
  // `seqs` ascending. With `helper` false, everything is read in finish().
  ObjectReads(const Ledger& ledger, std::vector<std::uint64_t> seqs, bool helper);
  ~ObjectReads();
  ObjectReads(const ObjectReads&) = delete;
  ObjectReads& operator=(const ObjectReads&) = delete;

  // Reads what is left on this thread beside the helper; joins it.
  [[nodiscard]] Status finish();

  const std::vector<std::uint64_t>& seqs() const { return seqs_; }
  // objects()[i] holds the version at seqs()[i] once finish() succeeded.
  std::vector<std::unique_ptr<StoredObject>>& objects() { return objects_; }

 private:
  static constexpr std::size_t kChunk = 64;

  // Takes the next chunk from the front (helper) or the back (caller);
  // false when nothing is left or a read failed.
  bool takeFront(std::size_t* begin, std::size_t* end);
  bool takeBack(std::size_t* begin, std::size_t* end);
  Status readChunk(std::size_t begin, std::size_t end);
  void fail(Status st);
  void joinHelper();

  const Ledger& ledger_;
  std::vector<std::uint64_t> seqs_;
  std::vector<std::unique_ptr<StoredObject>> objects_;
  std::mutex mu_;
  std::size_t front_ = 0;  // [front_, back_) is still to read
  std::size_t back_;
  Status failure_;  // the first failed read, under mu_
  std::thread helper_;
};

}  // namespace ledger::replay
