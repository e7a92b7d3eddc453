// A Workload's status as Kueue's cache reads it: the conditions that decide
// whether it holds quota (QuotaReserved, Admitted, Finished, Evicted) and the
// usage it holds, per (flavor, resource), from status.admission's
// podSetAssignments (pkg/workload totalRequestsFromAdmission: resourceUsage is
// already the pod set total; a resource is charged to the flavor named for it).
//
// Pure functions; thread-safe; never throw (malformed quantities are named in
// `problems`).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "projection.capnp.h"
#include "quota_tree.h"
#include "resources.h"

namespace ledger::replay {

struct WorkloadConditions {
  bool quotaReserved = false;
  bool admitted = false;
  bool finished = false;
  bool evicted = false;
  // Holds quota: QuotaReserved=True and not Finished (CONTRACT.md).
  bool reserving() const { return quotaReserved && !finished; }
  // Finished > Admitted > QuotaReserved > Pending.
  const char* state() const;
};

bool conditionTrue(capnp::List<schema::Condition>::Reader conditions, const char* type);
WorkloadConditions conditionsOf(schema::Workload::Reader workload);

// Recorded usage per (flavor, resource); resources with no flavor are not charged.
std::map<FlavorResource, Quantity> admissionUsage(schema::Workload::Reader workload,
                                                  std::vector<std::string>* problems);
// Recorded usage summed over pod sets (the report's `recorded`).
ResourceList recordedUsage(schema::Workload::Reader workload, std::vector<std::string>* problems);

}  // namespace ledger::replay
