// What a workload asks for, per pod set, as Kueue computes it before
// admission (pkg/workload totalRequestsFromPodSets): per-pod requests
// (Kubernetes PodRequests with limits filling missing requests), with the DRA
// charge of pkg/dra replacing the extended resources it covers and adding
// the DRA quota resources; `pods` = 1 per pod when the ClusterQueue covers it.
//
// Used by the audit (`computed`) and by admission decisions.
// Not thread-safe (shares the context's CEL cache); never throws.
#pragma once

#include <string>
#include <vector>

#include "replay/kueue/dra/dra_context.h"
#include "replay/kueue/dra/field_error.h"
#include "replay/kueue/resources.h"

namespace ledger::replay {

struct PodSetRequests {
  std::string name;
  std::int64_t count = 1;  // pods in the pod set (the admitted count when partially admitted)
  ResourceList perPod;
  ResourceList total() const { return scaled(perPod, count); }
};

struct WorkloadRequests {
  std::vector<PodSetRequests> podSets;
  std::vector<dra::FieldError> draErrors;  // non-empty: DRA resources are absent
  std::vector<std::string> problems;       // malformed quantities
  ResourceList total() const;
};

// `clusterQueue` may be null (then `pods` is not added).
WorkloadRequests workloadRequests(dra::DraContext& ctx, const std::string& ns,
                                  schema::Workload::Reader workload,
                                  const StoredObject* clusterQueue);

bool coversResource(const StoredObject* clusterQueue, const std::string& resource);

}  // namespace ledger::replay
