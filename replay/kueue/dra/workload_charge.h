// The DRA quota charge of a workload, computed the way Kueue's workload
// controller does before queueing it (pkg/controller/core/workload_controller.go
// handleDRA, pkg/dra): a pod set naming a ResourceClaim directly is refused;
// then the ResourceClaimTemplate path (claims.go), the extended-resource path
// (extended_resources.go), the counter path (counters.go) and the capacity
// path (capacity.go) run in that order, and the first path with errors stops
// the computation (its errors are the answer, in Kueue's words).
//
// Charges are per pod; the caller multiplies by the pod set's count.
// Deterministic: where upstream iterates Go maps, this iterates sorted keys.
// Not thread-safe (uses the context's selector cache); never throws.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "replay/kueue/dra/dra_context.h"
#include "replay/kueue/dra/field_error.h"
#include "replay/kueue/resources.h"

namespace ledger::replay::dra {

struct PodSetCharge {
  ResourceList perPod;                  // DRA resources charged per pod
  std::set<std::string> replacedNames;  // extended resources the DRA charge replaces
};

struct WorkloadCharge {
  std::map<std::string, PodSetCharge> podSets;  // by pod set name
  std::vector<FieldError> errors;
  bool ok() const { return errors.empty(); }
};

WorkloadCharge computeWorkloadCharge(DraContext& ctx, const std::string& ns,
                                     schema::Workload::Reader workload);

// The individual paths (exposed for tests; each appends to `out`).
void chargeClaimTemplates(DraContext& ctx, const std::string& ns, schema::Workload::Reader wl,
                          WorkloadCharge& out);
void chargeExtendedResources(DraContext& ctx, schema::Workload::Reader wl, WorkloadCharge& out);
void chargeCounters(DraContext& ctx, const std::string& ns, schema::Workload::Reader wl,
                    WorkloadCharge& out);
void chargeCapacity(DraContext& ctx, const std::string& ns, schema::Workload::Reader wl,
                    WorkloadCharge& out);

// The DeviceClass that backs an extended resource (newest creationTimestamp,
// at second granularity; ties to the smallest name), or nullptr.
const StoredObject* deviceClassForExtendedResource(const ClusterState& state,
                                                   const std::string& resource);

}  // namespace ledger::replay::dra
