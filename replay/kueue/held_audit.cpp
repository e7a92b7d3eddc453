// What pods hold through allocated ResourceClaims now, per (ClusterQueue,
// flavor, resource), keyed and set against charges as the usage report's
// held and uncharged integrals are (held_tracker.h, usage_levels.cpp), so
// that /metrics shows the level whose integral `report` prints.
#include <set>
#include <tuple>

#include "replay/kueue/audit.h"
#include "replay/kueue/claim_attribution.h"
#include "replay/kueue/dra/held_amount.h"

namespace ledger::replay {

namespace {

// The kubelet releases a terminal pod's devices: its claims hold nothing.
bool terminalPod(const StoredObject& pod) {
  const std::string_view phase = textView(pod.projection().getBody().getPod().getPhase());
  return phase == "Succeeded" || phase == "Failed";
}

// Where a holder's devices count: its Workload's admission's ClusterQueue
// and the flavor that admission charges the resource in when exactly one
// does ("-" otherwise, and for pods of no Workload); what it is charged for
// the resource while it holds a reservation.
struct HolderView {
  std::string clusterQueue = "-";
  std::map<std::string, std::string> flavorOf;
  ResourceList charged;
};

HolderView holderViewOf(const WorkloadAudit* w) {
  HolderView v;
  if (w == nullptr || w->object == nullptr) return v;
  if (!w->object->projection().getBody().getWorkload().getHasAdmission()) return v;
  v.clusterQueue = w->report.clusterQueue;
  std::map<std::string, int> flavors;
  for (const auto& [fr, q] : w->usage) {
    v.flavorOf[fr.second] = ++flavors[fr.second] == 1 ? fr.first : "-";
    // Overflow leaves the charge as it was: the row's uncharged is then
    // an upper bound, never a wrapped number.
    if (w->report.quotaReserved && !w->report.finished) addExact(v.charged[fr.second], q);
  }
  return v;
}

}  // namespace

std::vector<HeldRow> auditHeld(AuditContext& ctx, std::vector<WorkloadAudit>& wls) {
  const Attributor attributor(ctx.state, wls);
  const dra::HeldInputs in{ctx.state, ctx.mapper, ctx.selectors};
  // What each holder holds: per claim, summed per Workload (the charge is
  // the Workload's) or per pod of no Workload.
  std::map<const void*, std::pair<const WorkloadAudit*, ResourceList>> holdings;
  std::map<const void*, std::set<std::string>> lost;
  for (const auto& [key, claimObj] : ctx.state.objects(ObjectKind::kResourceClaim)) {
    auto claim = claimObj->projection().getBody().getResourceClaim();
    if (!claim.getAllocated()) continue;
    const Attribution who = attributor.attribute(*claimObj);
    if (who.pod == nullptr || terminalPod(*who.pod)) continue;  // held for a live pod only
    const void* holder = who.workload != nullptr ? static_cast<const void*>(who.workload)
                                                 : static_cast<const void*>(who.pod);
    auto& [workload, held] = holdings[holder];
    workload = who.workload;
    for (auto result : claim.getResults()) {
      if (result.getAdminAccess()) continue;  // admin access holds nothing (KEP-5018)
      const dra::CatalogDevice* device = ctx.catalog.find(
          result.getDriver().cStr(), result.getPool().cStr(), result.getDevice().cStr());
      dra::addHeld(in, dra::resultClass(claim, result), device, result, held, lost[holder]);
    }
  }
  std::map<std::tuple<std::string, std::string, std::string>, HeldRow> rows;
  for (const auto& [holder, entry] : holdings) {
    const HolderView view = holderViewOf(entry.first);
    auto rowOf = [&](const std::string& resource) -> HeldRow& {
      auto f = view.flavorOf.find(resource);
      const std::string flavor = f == view.flavorOf.end() ? "-" : f->second;
      HeldRow& row = rows[{view.clusterQueue, flavor, resource}];
      row.clusterQueue = view.clusterQueue;
      row.flavor = flavor;
      row.resource = resource;
      return row;
    };
    for (const auto& resource : lost[holder]) {
      HeldRow& row = rowOf(resource);
      row.heldUnrepresentable = row.unchargedUnrepresentable = true;
    }
    for (const auto& [resource, amount] : entry.second) {
      HeldRow& row = rowOf(resource);
      auto c = view.charged.find(resource);
      const Quantity charged = c == view.charged.end() ? Quantity() : c->second;
      const Quantity uncharged = charged < amount ? amount - charged : Quantity();
      if (!addExact(row.held, amount)) row.heldUnrepresentable = true;
      if (!addExact(row.uncharged, uncharged)) row.unchargedUnrepresentable = true;
    }
  }
  std::vector<HeldRow> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

}  // namespace ledger::replay
