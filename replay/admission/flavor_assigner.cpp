#include "replay/admission/flavor_assigner.h"

#include "replay/admission/flavor_eligibility.h"

namespace ledger::replay::admission {

namespace {

struct ResourceGroup {
  std::set<std::string> covered;
  std::vector<std::string> flavors;  // ClusterQueue order
};

std::vector<ResourceGroup> groupsOf(schema::ClusterQueue::Reader cq) {
  std::vector<ResourceGroup> out;
  for (auto rg : cq.getResourceGroups()) {
    ResourceGroup g;
    for (auto r : rg.getCoveredResources()) g.covered.insert(r.cStr());
    for (auto f : rg.getFlavors()) g.flavors.emplace_back(f.getName().cStr());
    out.push_back(std::move(g));
  }
  return out;
}

// What findFlavorForPodSets hands back for one resource group.
struct FlavorSearch {
  std::map<std::string, FlavorChoice> flavors;  // empty: no flavor
  std::vector<std::string> reasons;             // empty when the chosen flavor fits
};

class Assigner {
 public:
  Assigner(const AssignerContext& ctx, schema::ClusterQueue::Reader cq)
      : ctx_(ctx), groups_(groupsOf(cq)), fungibility_(fungibilityOf(cq)) {}

  Assignment run(const std::vector<PodSetRequest>& podSets);

 private:
  const ResourceGroup* groupFor(const std::string& resource) const {
    for (const auto& g : groups_) {
      if (g.covered.count(resource) != 0) return &g;
    }
    return nullptr;
  }
  QuotaCheck fitsResourceQuota(const FlavorResource& fr, Int128 assumed, Int128 request) const;
  FlavorSearch findFlavorForPodSet(const PodSetRequest& ps,
                                   const std::map<std::string, Int128>& requests,
                                   const ResourceGroup& rg, const Assignment& soFar,
                                   PodSetAssignment& record) const;
  std::string fmt(const std::string& resource, Int128 v) const {
    return formatKueue(resource, v, ctx_.binaryResources);
  }

  const AssignerContext& ctx_;
  std::vector<ResourceGroup> groups_;
  FlavorFungibility fungibility_;
};

// FlavorAssigner.fitsResourceQuota.
QuotaCheck Assigner::fitsResourceQuota(const FlavorResource& fr, Int128 assumed,
                                       Int128 request) const {
  QuotaCheck c;
  c.flavor = fr.first;
  c.resource = fr.second;
  c.assumed = assumed;
  c.request = request;
  c.available = ctx_.quota.available(ctx_.clusterQueue, fr);
  c.potentialAvailable = ctx_.quota.potentialAvailable(ctx_.clusterQueue, fr);
  const Int128 val = assumed + request;
  if (val > c.potentialAvailable) {
    c.mode = PreemptionMode::kNoFit;
    c.reason = "insufficient quota for " + fr.second + " in flavor " + fr.first +
               ", previously considered podsets requests (" + fmt(fr.second, assumed) +
               ") + current podset request (" + fmt(fr.second, request) + ") > maximum capacity (" +
               fmt(fr.second, c.potentialAvailable) + ")";
    return c;
  }
  const BorrowingHeight h = ctx_.quota.heightOfLowestSubtreeThatFits(ctx_.clusterQueue, fr, val);
  c.borrow = h.height;
  c.borrowCohort = h.cohort;
  if (val <= c.available) {
    c.mode = PreemptionMode::kFit;
    return c;
  }
  c.reason = "insufficient unused quota for " + fr.second + " in flavor " + fr.first + ", " +
             fmt(fr.second, val - c.available) + " more needed";
  if (ctx_.quota.nominal(ctx_.clusterQueue, fr) >= val || h.mayReclaim ||
      ctx_.canPreemptWhileBorrowing) {
    const PreemptionSimulation sim = ctx_.oracle(fr, val);
    c.mode = sim.mode;
    c.borrow = sim.borrowAfter;
    if (c.borrow == 0) c.borrowCohort.clear();
    return c;
  }
  c.mode = PreemptionMode::kNoFit;
  return c;
}

// FlavorAssigner.findFlavorForPodSets for a pod set on its own (no TAS group).
FlavorSearch Assigner::findFlavorForPodSet(const PodSetRequest& ps,
                                           const std::map<std::string, Int128>& requests,
                                           const ResourceGroup& rg, const Assignment& soFar,
                                           PodSetAssignment& record) const {
  std::vector<std::string> names;
  for (const auto& [name, v] : requests) {
    if (rg.covered.count(name) != 0) names.push_back(name);
  }
  names = kueueResourceOrder(std::move(names));

  FlavorSearch best;
  GranularMode bestMode;  // worstGranularMode
  std::vector<std::string> reasons;
  for (const std::string& flavor : rg.flavors) {
    // checkFlavorForPodSets.
    std::string rejection;
    const StoredObject* obj = ctx_.state.find(ObjectKind::kResourceFlavor, flavor);
    if (obj == nullptr) {
      rejection = "flavor " + flavor + " not found";
    } else {
      rejection =
          flavorIneligibility(flavor, obj->projection().getBody().getResourceFlavor(), ps.podSpec);
    }
    if (!rejection.empty()) {
      reasons.push_back(rejection);
      record.rejectedFlavors.push_back(RejectedFlavor{flavor, rejection});
      continue;
    }
    std::map<std::string, FlavorChoice> assignments;
    GranularMode representative{PreemptionMode::kFit, 0};  // bestGranularMode
    for (const std::string& r : names) {
      const FlavorResource fr{flavor, r};
      auto used = soFar.usage.find(fr);
      const QuotaCheck c =
          fitsResourceQuota(fr, used == soFar.usage.end() ? 0 : used->second, requests.at(r));
      if (!c.reason.empty()) reasons.push_back(c.reason);
      record.checks.push_back(c);
      const GranularMode mode{c.mode, c.borrow};
      if (isPreferred(representative, mode)) representative = mode;
      // Upstream returns from the ForEach callback only: later resources are
      // still checked (and their reasons kept), but get no assignment.
      if (representative.preemption == PreemptionMode::kNoFit) continue;
      assignments[r] =
          FlavorChoice{flavor, assignmentMode(c.mode), c.mode, c.borrow, c.borrowCohort};
    }
    if (!shouldTryNextFlavor(representative, fungibility_)) {
      best.flavors = std::move(assignments);
      bestMode = representative;
      break;
    }
    if (isPreferred(representative, bestMode)) {
      best.flavors = std::move(assignments);
      bestMode = representative;
    }
  }
  if (bestMode.preemption != PreemptionMode::kFit) best.reasons = std::move(reasons);
  return best;
}

// FlavorAssigner.assignFlavors, each pod set its own group.
Assignment Assigner::run(const std::vector<PodSetRequest>& podSets) {
  Assignment out;
  const bool coversPods = groupFor("pods") != nullptr;
  for (const PodSetRequest& ps : podSets) {
    PodSetAssignment psa;
    psa.name = ps.name;
    psa.count = ps.count;
    psa.requests = ps.requests;
    if (coversPods) psa.requests["pods"] = ps.count;
    std::vector<std::string> names;
    for (const auto& [name, v] : psa.requests) names.push_back(name);

    std::map<std::string, FlavorChoice> groupFlavors;
    std::vector<std::string> groupReasons;
    bool failed = false;
    for (const std::string& res : kueueResourceOrder(std::move(names))) {
      const ResourceGroup* rg = groupFor(res);
      if (rg == nullptr) {
        if (psa.requests.at(res) == 0) continue;  // zero requests need no flavor (#8079)
        groupReasons = {"resource " + res + " unavailable in ClusterQueue"};
        psa.uncovered.push_back(res);
        failed = true;
        break;
      }
      if (groupFlavors.count(res) != 0) continue;  // its group already has a flavor
      FlavorSearch search = findFlavorForPodSet(ps, psa.requests, *rg, out, psa);
      if (search.flavors.empty()) {
        groupReasons = std::move(search.reasons);
        failed = true;
        break;
      }
      groupFlavors.merge(search.flavors);
      groupReasons.insert(groupReasons.end(), search.reasons.begin(), search.reasons.end());
    }
    if (!failed) psa.flavors = std::move(groupFlavors);
    psa.reasons = std::move(groupReasons);
    // Assignment.append: usage accumulates for the next pod sets.
    for (const auto& [res, choice] : psa.flavors) {
      out.borrowing = std::max(out.borrowing, choice.borrow);
      out.usage[{choice.flavor, res}] += psa.requests.at(res);
    }
    out.podSets.push_back(std::move(psa));
    if (failed) break;
  }
  return out;
}

}  // namespace

Assignment assignFlavors(const AssignerContext& ctx, const std::vector<PodSetRequest>& podSets) {
  const StoredObject* cq = ctx.state.find(ObjectKind::kClusterQueue, ctx.clusterQueue);
  if (cq == nullptr) return Assignment{};
  Assigner assigner(ctx, cq->projection().getBody().getClusterQueue());
  return assigner.run(podSets);
}

}  // namespace ledger::replay::admission
