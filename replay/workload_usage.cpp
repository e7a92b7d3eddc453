#include "workload_usage.h"

namespace ledger::replay {

bool conditionTrue(capnp::List<schema::Condition>::Reader conditions, const char* type) {
  for (auto c : conditions) {
    if (c.getType() == type) return c.getStatus() == "True";
  }
  return false;
}

const char* WorkloadConditions::state() const {
  return finished        ? "Finished"
         : admitted      ? "Admitted"
         : quotaReserved ? "QuotaReserved"
                         : "Pending";
}

WorkloadConditions conditionsOf(schema::Workload::Reader workload) {
  auto c = workload.getConditions();
  WorkloadConditions out;
  out.quotaReserved = conditionTrue(c, "QuotaReserved");
  out.admitted = conditionTrue(c, "Admitted");
  out.finished = conditionTrue(c, "Finished");
  out.evicted = conditionTrue(c, "Evicted");
  return out;
}

std::map<FlavorResource, Quantity> admissionUsage(schema::Workload::Reader workload,
                                                  std::vector<std::string>* problems) {
  std::map<FlavorResource, Quantity> out;
  if (!workload.getHasAdmission()) return out;
  for (auto psa : workload.getPodSetAssignments()) {
    for (const auto& [res, q] : toResourceList(psa.getResourceUsage(), problems, "resourceUsage")) {
      for (auto f : psa.getFlavors()) {
        if (f.getResource() == res) out[{f.getFlavor().cStr(), res}] += q;
      }
    }
  }
  return out;
}

ResourceList recordedUsage(schema::Workload::Reader workload, std::vector<std::string>* problems) {
  ResourceList out;
  if (!workload.getHasAdmission()) return out;
  for (auto psa : workload.getPodSetAssignments()) {
    addInto(out, toResourceList(psa.getResourceUsage(), problems, "resourceUsage"));
  }
  return out;
}

}  // namespace ledger::replay
