#include "replay/kueue/dra/workload_charge.h"

namespace ledger::replay::dra {

WorkloadCharge computeWorkloadCharge(DraContext& ctx, const std::string& ns,
                                     schema::Workload::Reader workload) {
  WorkloadCharge out;
  // handleDRA refuses pod sets that name a ResourceClaim directly.
  for (auto ps : workload.getPodSets()) {
    for (auto rc : ps.getTemplate().getResourceClaims()) {
      if (rc.getResourceClaimName().size() > 0) {
        out.errors.push_back(FieldError::internal(
            "", "KueueDRAIntegration feature does not support use of resource claims"));
        return out;
      }
    }
  }
  // The paths in handleDRA's order; the first with errors ends it.
  chargeClaimTemplates(ctx, ns, workload, out);
  if (!out.ok()) return out;
  chargeExtendedResources(ctx, workload, out);
  if (!out.ok()) return out;
  chargeCounters(ctx, ns, workload, out);
  if (!out.ok()) return out;
  chargeCapacity(ctx, ns, workload, out);
  return out;
}

}  // namespace ledger::replay::dra
