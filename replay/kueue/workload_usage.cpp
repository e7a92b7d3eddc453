#include "replay/kueue/workload_usage.h"

#include <algorithm>
#include <climits>

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

std::map<std::string, std::int32_t> podSetsCountsAfterReclaim(schema::Workload::Reader workload) {
  std::map<std::string, std::int32_t> counts;
  for (auto ps : workload.getPodSets()) counts[ps.getName().cStr()] = ps.getCount();
  // reclaimableCounts: utilslices.ToMap, so a repeated name keeps its last count.
  std::map<std::string, std::int32_t> reclaimable;
  for (auto rp : workload.getReclaimablePods()) reclaimable[rp.getName().cStr()] = rp.getCount();
  for (auto& [name, count] : counts) {
    auto it = reclaimable.find(name);
    // The reclaimable count can exceed the pod set's after an elastic
    // scale-down (kueue#12670); Kueue never lets the count go negative.
    if (it != reclaimable.end()) count -= std::min(it->second, count);
  }
  return counts;
}

namespace {

// resources.ResourceValue clamps to int64 (SafeMilliValue / SafeValue).
Int128 resourceValue(const std::string& resource, const Quantity& q) {
  return std::clamp<Int128>(kueueValue(resource, q), INT64_MIN, INT64_MAX);
}

// Kueue units back to a quantity: cpu in milli-units, the rest in units.
Quantity fromResourceValue(const std::string& resource, Int128 value, Quantity::Format format) {
  return Quantity::fromNanos(value * (resource == "cpu" ? 1'000'000 : 1'000'000'000), format);
}

}  // namespace

std::vector<PodSetUsage> totalRequestsFromAdmission(schema::Workload::Reader workload,
                                                    std::vector<std::string>* problems) {
  std::vector<PodSetUsage> out;
  if (!workload.getHasAdmission()) return out;
  const auto currentCounts = podSetsCountsAfterReclaim(workload);
  std::map<std::string, std::int32_t> totalCounts;
  for (auto ps : workload.getPodSets()) totalCounts[ps.getName().cStr()] = ps.getCount();
  for (auto psa : workload.getPodSetAssignments()) {
    PodSetUsage u;
    u.name = psa.getName().cStr();
    for (auto f : psa.getFlavors()) u.flavors[f.getResource().cStr()] = f.getFlavor().cStr();
    u.requests = toResourceList(psa.getResourceUsage(), problems, "resourceUsage");
    // ptr.Deref(psa.Count, podSetsCounts[name]); the projection cannot tell an
    // absent count from 0, and an admitted count of 0 charges nothing anyway.
    const auto total = totalCounts.find(u.name);
    u.count = psa.getCount() > 0 ? psa.getCount() : total == totalCounts.end() ? 0 : total->second;
    // A pod set the spec does not name counts 0 pods after reclaim, as the Go
    // map lookup gives (the webhook's validateAdmission rejects such an
    // admission, so only a hand-written stream reaches this).
    const auto current = currentCounts.find(u.name);
    const std::int32_t countAfterReclaim = current == currentCounts.end() ? 0 : current->second;
    // Fewer pods left than admitted: scale the consumption down. More left
    // means a partial admission, whose count stands.
    if (countAfterReclaim < u.count) {
      for (auto& [resource, q] : u.requests) {
        const Int128 scaled = resourceValue(resource, q) / u.count * countAfterReclaim;
        q = fromResourceValue(resource, scaled, q.format());
      }
      u.count = countAfterReclaim;
    }
    out.push_back(std::move(u));
  }
  return out;
}

std::map<FlavorResource, Quantity> admissionUsage(schema::Workload::Reader workload,
                                                  std::vector<std::string>* problems) {
  std::map<FlavorResource, Quantity> out;
  for (const PodSetUsage& ps : totalRequestsFromAdmission(workload, problems)) {
    for (const auto& [resource, q] : ps.requests) {
      auto f = ps.flavors.find(resource);
      if (f != ps.flavors.end()) out[{f->second, resource}] += q;
    }
  }
  return out;
}

std::map<FlavorResource, Quantity> recordedFlavorUsage(schema::Workload::Reader workload,
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
