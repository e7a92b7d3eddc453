#include "replay/kueue/workload_requests.h"

#include <map>

#include "replay/kueue/dra/workload_charge.h"

namespace ledger::replay {

bool coversResource(const StoredObject* cq, const std::string& resource) {
  if (cq == nullptr) return false;
  for (auto rg : cq->projection().getBody().getClusterQueue().getResourceGroups()) {
    for (auto r : rg.getCoveredResources()) {
      if (r == resource) return true;
    }
  }
  return false;
}

ResourceList WorkloadRequests::total() const {
  ResourceList out;
  for (const auto& ps : podSets) addInto(out, ps.total());
  return out;
}

namespace {

// Extended resources some DeviceClass backs: DRA resources, absent from the
// requests when the DRA charge cannot be computed.
bool draBacked(const ClusterState& state, const std::string& name) {
  return isExtendedResourceName(name) &&
         dra::deviceClassForExtendedResource(state, name) != nullptr;
}

}  // namespace

WorkloadRequests workloadRequests(dra::DraContext& ctx, const std::string& ns,
                                  schema::Workload::Reader wl, const StoredObject* cq) {
  WorkloadRequests out;
  dra::WorkloadCharge charge = dra::computeWorkloadCharge(ctx, ns, wl);
  out.draErrors = charge.errors;
  std::map<std::string, std::int32_t> admittedCounts;
  for (auto psa : wl.getPodSetAssignments()) {
    if (psa.getCount() > 0) admittedCounts[psa.getName().cStr()] = psa.getCount();
  }
  const bool countsPods = coversResource(cq, "pods");
  for (auto ps : wl.getPodSets()) {
    PodSetRequests r;
    r.name = ps.getName().cStr();
    r.perPod = podRequests(ps.getTemplate(), &out.problems);
    if (charge.ok()) {
      auto it = charge.podSets.find(r.name);
      if (it != charge.podSets.end()) {
        for (const auto& name : it->second.replacedNames) r.perPod.erase(name);
        addInto(r.perPod, it->second.perPod);
      }
    } else {
      for (auto it = r.perPod.begin(); it != r.perPod.end();) {
        it = draBacked(ctx.state, it->first) ? r.perPod.erase(it) : std::next(it);
      }
    }
    if (countsPods) r.perPod["pods"] = Quantity::fromInt(1);
    r.count = ps.getCount();
    if (auto it = admittedCounts.find(r.name); it != admittedCounts.end()) r.count = it->second;
    out.podSets.push_back(std::move(r));
  }
  return out;
}

}  // namespace ledger::replay
