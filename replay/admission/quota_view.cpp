#include "replay/admission/quota_view.h"

#include <algorithm>

namespace ledger::replay::admission {

namespace {

Int128 units(const FlavorResource& fr, const Quantity& q) { return kueueUnits(fr.second, q); }

}  // namespace

Int128 QuotaView::nominal(const std::string& clusterQueue, const FlavorResource& fr) const {
  const ResourceLimits* l = tree_.limits(clusterQueue, false, fr);
  return l == nullptr ? 0 : units(fr, l->nominal);
}

Int128 QuotaView::subtreeQuota(const std::string& node, bool isCohort,
                               const FlavorResource& fr) const {
  return units(fr, tree_.subtreeQuota(node, isCohort, fr));
}

Int128 QuotaView::localQuota(const std::string& node, bool isCohort,
                             const FlavorResource& fr) const {
  return units(fr, tree_.localQuota(node, isCohort, fr));
}

Int128 QuotaView::usage(const std::string& node, bool isCohort, const FlavorResource& fr) const {
  return units(fr, tree_.usage(node, isCohort, fr));
}

Int128 QuotaView::localAvailable(const std::string& node, bool isCohort,
                                 const FlavorResource& fr) const {
  return std::max<Int128>(0, localQuota(node, isCohort, fr) - usage(node, isCohort, fr));
}

Int128 QuotaView::available(const std::string& clusterQueue, const FlavorResource& fr) const {
  return units(fr, tree_.available(clusterQueue, fr));
}

Int128 QuotaView::potentialAvailable(const std::string& clusterQueue,
                                     const FlavorResource& fr) const {
  return units(fr, tree_.potentialAvailable(clusterQueue, fr));
}

bool QuotaView::borrowingWith(const std::string& clusterQueue, const FlavorResource& fr,
                              Int128 val) const {
  return nominal(clusterQueue, fr) < usage(clusterQueue, false, fr) + val;
}

int QuotaView::cohortHeight(const std::string& cohort) const {
  const auto children = tree_.children(cohort);
  int height = children.empty() ? 0 : 1;
  for (const auto& [child, isCohort] : children) {
    if (isCohort) height = std::max(height, cohortHeight(child) + 1);
  }
  return height;
}

std::string QuotaView::rootOf(const std::string& node, bool isCohort) const {
  std::string root = isCohort ? node : std::string();
  for (std::string p = tree_.parentOf(node, isCohort); !p.empty(); p = tree_.parentOf(p, true)) {
    root = p;
  }
  return root;
}

BorrowingHeight QuotaView::heightOfLowestSubtreeThatFits(const std::string& clusterQueue,
                                                         const FlavorResource& fr,
                                                         Int128 val) const {
  const std::string parent = tree_.parentOf(clusterQueue, false);
  if (!borrowingWith(clusterQueue, fr, val) || parent.empty()) {
    return BorrowingHeight{0, !parent.empty(), ""};
  }
  Int128 remaining = val - localAvailable(clusterQueue, false, fr);
  for (std::string node = parent; !node.empty(); node = tree_.parentOf(node, true)) {
    // CohortSnapshot.BorrowingWith: SubtreeQuota < Usage + remaining.
    if (!(subtreeQuota(node, true, fr) < usage(node, true, fr) + remaining)) {
      return BorrowingHeight{cohortHeight(node), !tree_.parentOf(node, true).empty(), node};
    }
    remaining -= localAvailable(node, true, fr);
  }
  const std::string root = rootOf(clusterQueue, false);
  return BorrowingHeight{cohortHeight(root), false, root};
}

}  // namespace ledger::replay::admission
