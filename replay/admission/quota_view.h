// The quota tree as Kueue's scheduler sees it (pkg/cache/scheduler
// resource_node.go, clusterqueue_snapshot.go, cohort_snapshot.go): every
// number in Kueue units (kueue_units.h) so comparisons match the scheduler's
// int64 arithmetic, plus the borrowing-height search of
// pkg/scheduler/preemption/classical FindHeightOfLowestSubtreeThatFits.
//
// Ownership: borrows the QuotaTree, which must outlive the view.
// Thread-compatible; never throws.
#pragma once

#include <string>

#include "replay/admission/kueue_units.h"
#include "replay/kueue/quota_tree.h"

namespace ledger::replay::admission {

struct BorrowingHeight {
  int height = 0;           // 0: no borrowing; else the height of the subtree that fits
  bool mayReclaim = false;  // the subtree is smaller than the whole cohort tree
  std::string cohort;       // the cohort whose subtree fits ("" when no borrowing)
};

class QuotaView {
 public:
  explicit QuotaView(const QuotaTree& tree) : tree_(tree) {}

  const QuotaTree& tree() const { return tree_; }
  std::string parentOf(const std::string& node, bool isCohort) const {
    return tree_.parentOf(node, isCohort);
  }

  Int128 nominal(const std::string& clusterQueue, const FlavorResource& fr) const;
  Int128 subtreeQuota(const std::string& node, bool isCohort, const FlavorResource& fr) const;
  Int128 localQuota(const std::string& node, bool isCohort, const FlavorResource& fr) const;
  Int128 usage(const std::string& node, bool isCohort, const FlavorResource& fr) const;
  // LocalAvailable: guaranteed quota of this node not yet used (>= 0).
  Int128 localAvailable(const std::string& node, bool isCohort, const FlavorResource& fr) const;
  // ClusterQueueSnapshot.Available / PotentialAvailable.
  Int128 available(const std::string& clusterQueue, const FlavorResource& fr) const;
  Int128 potentialAvailable(const std::string& clusterQueue, const FlavorResource& fr) const;
  // ClusterQueueSnapshot.BorrowingWith: nominal < usage + val.
  bool borrowingWith(const std::string& clusterQueue, const FlavorResource& fr, Int128 val) const;

  // FindHeightOfLowestSubtreeThatFits(cq, fr, val).
  BorrowingHeight heightOfLowestSubtreeThatFits(const std::string& clusterQueue,
                                                const FlavorResource& fr, Int128 val) const;
  // getNodeHeight: distance from a cohort to its furthest leaf.
  int cohortHeight(const std::string& cohort) const;
  // The root of the cohort tree a queue or cohort belongs to ("" for none).
  std::string rootOf(const std::string& node, bool isCohort) const;

 private:
  const QuotaTree& tree_;
};

}  // namespace ledger::replay::admission
