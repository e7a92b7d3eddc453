// Internal to replay/: the steps buildReport takes, one file each.
//   workload_audit.cpp  per-workload state, recorded and computed charges
//   queue_audit.cpp     ClusterQueue usage rows, cohorts, quota findings
//   pool_audit.cpp      DRA pools, allocations, attribution, DRA findings
//   held_audit.cpp      what pods hold through claims, per ClusterQueue
// Not thread-safe (shares a CEL selector cache); never throws.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "replay/kueue/charge_at_reservation.h"
#include "replay/kueue/dra/device_catalog.h"
#include "replay/kueue/dra/dra_context.h"
#include "replay/kueue/dra/resource_mapper.h"
#include "replay/kueue/dra/workload_charge.h"
#include "replay/kueue/report.h"
#include "replay/kueue/workload_usage.h"

namespace ledger::replay {

struct AuditContext {
  const ClusterState& state;
  dra::ResourceMapper mapper;
  dra::DeviceCatalog catalog;
  cel::SelectorCache selectors;
  dra::DeviceMatchCache matches;
  dra::DraContext dra;
  ChargeAtReservation atReservation;
  std::vector<Finding> findings;

  explicit AuditContext(const ClusterState& s);
  void finding(std::string type, std::string object, std::string message) {
    findings.push_back(Finding{std::move(type), std::move(object), std::move(message)});
  }
  // `what`, a value of `object` the report would show, is past Quantity's
  // exact range: a QuantityOverflow finding naming it and the state's seq.
  // The value is left out and the rest of the report goes on: anything not
  // representable is a finding, never a wrapped number, and never the end
  // of the report.
  void overflow(std::string object, const std::string& what);
};

// sum += q, unless the result is past Quantity's exact range: then false,
// and `sum` as it was.
inline bool addExact(Quantity& sum, const Quantity& q) {
  try {
    sum = sum + q;
    return true;
  } catch (const std::overflow_error&) {
    return false;
  }
}

struct WorkloadAudit {
  WorkloadReport report;
  const StoredObject* object = nullptr;
  std::map<FlavorResource, Quantity> usage;  // held, after reclaim (admissionUsage)
  std::vector<std::string> uids;             // ownerReference uids (the Job etc.)
};

std::vector<WorkloadAudit> auditWorkloads(AuditContext& ctx);
std::vector<ClusterQueueReport> auditQueues(AuditContext& ctx,
                                            const std::vector<WorkloadAudit>& wls);
std::vector<PoolReport> auditPools(AuditContext& ctx, std::vector<WorkloadAudit>& wls,
                                   std::vector<ClusterQueueReport>& queues);

std::vector<HeldRow> auditHeld(AuditContext& ctx, std::vector<WorkloadAudit>& wls);

std::string objectRef(const char* kind, std::string_view ns, std::string_view name);

}  // namespace ledger::replay
