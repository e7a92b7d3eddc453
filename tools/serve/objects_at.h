// Which version of each stored object was live at a moment: the seq of its
// last record at or before the moment, when that record was not a deletion.
//
// The kinds the replayer folds (Kueue's queues, flavors and Workloads, Pods,
// Namespaces and the DRA kinds) come from the folded state at that seq,
// which a checkpoint makes a short fold; any other kind from the object
// index, each object's last record key at or before the seq. Folded states
// are kept for the last few moments asked (StateCache), since a kubectl
// session asks one moment many times.
//
// Thread safety: StateCache is safe to share between request threads;
// listObjects only reads. Errors: throw ApiError (500) when the ledger
// cannot be read or its projection is damaged.
#pragma once

#include <cstdint>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ledger/ledger.h"
#include "replay/fold/cluster_state.h"
#include "tools/serve/resource_catalog.h"

namespace ledger::serve {

struct ObjectVersion {
  std::string ns, name;
  std::uint64_t seq = 0;  // the record holding this version
};

class StateCache {
 public:
  explicit StateCache(std::size_t capacity = 8) : capacity_(capacity) {}
  // The folded state after record `seq`; concurrent callers for one seq
  // share one fold.
  std::shared_ptr<const replay::ClusterState> at(const Ledger& ledger, std::uint64_t seq);

 private:
  using Entry =
      std::pair<std::uint64_t, std::shared_future<std::shared_ptr<const replay::ClusterState>>>;
  std::size_t capacity_;
  std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
};

// The live objects of `resource` (a stored kind) at record `seq`, in
// namespace `ns` (empty: all), sorted by namespace then name.
std::vector<ObjectVersion> listObjects(const Ledger& ledger, StateCache& states,
                                       const ApiResource& resource, std::uint64_t seq,
                                       std::string_view ns);

// The record of one version, its object JSON included.
Record readVersion(const Ledger& ledger, std::uint64_t seq);

}  // namespace ledger::serve
