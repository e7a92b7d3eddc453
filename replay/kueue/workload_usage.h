// A Workload's status as Kueue's cache reads it: the conditions that decide
// whether it holds quota (QuotaReserved, Admitted, Finished, Evicted) and the
// usage it holds, per (flavor, resource), from status.admission's
// podSetAssignments (pkg/workload totalRequestsFromAdmission: resourceUsage is
// already the pod set total, scaled down to the pods status.reclaimablePods
// leaves; a resource is charged to the flavor named for it). `recorded` is
// the plain resourceUsage: what Kueue charged at admission.
//
// Pure functions; thread-safe; never throw (malformed quantities are named in
// `problems`).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "replay/kueue/quota_tree.h"
#include "replay/kueue/resources.h"
#include "schema/projection.capnp.h"

namespace ledger::replay {

struct WorkloadConditions {
  bool quotaReserved = false;
  bool admitted = false;
  bool finished = false;
  bool evicted = false;
  // Holds quota: QuotaReserved=True and not Finished (docs/reference.md).
  bool reserving() const { return quotaReserved && !finished; }
  // Finished > Admitted > QuotaReserved > Pending.
  const char* state() const;
};

bool conditionTrue(capnp::List<schema::Condition>::Reader conditions, const char* type);
WorkloadConditions conditionsOf(schema::Workload::Reader workload);

// pkg/workload podSetsCountsAfterReclaim: each spec.podSets count less its
// status.reclaimablePods count, never below 0 (the ReclaimablePods gate is on
// by default since Kueue 0.15). Entries naming no pod set are ignored.
std::map<std::string, std::int32_t> podSetsCountsAfterReclaim(schema::Workload::Reader workload);

// One pod set's usage as pkg/workload PodSetResources holds it.
struct PodSetUsage {
  std::string name;
  // The admitted count (podSetAssignments[].count, else the spec count; an
  // explicit 0 reads as absent), lowered to the count after reclaim.
  std::int32_t count = 0;
  ResourceList requests;                       // the pod set total
  std::map<std::string, std::string> flavors;  // resource -> flavor
};

// pkg/workload totalRequestsFromAdmission: per podSetAssignment, its
// resourceUsage; when fewer pods are left after reclaim than were admitted,
// each resource in Kueue units (cpu milli, else whole units rounded away from
// zero: resources.ResourceValue) divided by the admitted count and multiplied
// by the count left, in integers (resources.Requests Divide, Mul). Empty
// without status.admission.
std::vector<PodSetUsage> totalRequestsFromAdmission(schema::Workload::Reader workload,
                                                    std::vector<std::string>* problems);

// The usage a reserved workload holds per (flavor, resource) (Info
// ResourceUsage().Assigned, what pkg/cache adds to its ClusterQueue):
// totalRequestsFromAdmission; resources with no flavor are not charged.
std::map<FlavorResource, Quantity> admissionUsage(schema::Workload::Reader workload,
                                                  std::vector<std::string>* problems);
// status.admission's resourceUsage per (flavor, resource), before any
// reclaim: what Kueue charged at admission.
std::map<FlavorResource, Quantity> recordedFlavorUsage(schema::Workload::Reader workload,
                                                       std::vector<std::string>* problems);
// Recorded usage summed over pod sets (the report's `recorded`).
ResourceList recordedUsage(schema::Workload::Reader workload, std::vector<std::string>* problems);

}  // namespace ledger::replay
