// The extended-resource path (Kueue pkg/dra/extended_resources.go
// ResolveExtendedResourceQuota, selectedDeviceClass, resolveQuotaKey).
#include <algorithm>

#include "replay/kueue/dra/workload_charge.h"

namespace ledger::replay::dra {

const StoredObject* deviceClassForExtendedResource(const ClusterState& state,
                                                   const std::string& resource) {
  const StoredObject* chosen = nullptr;
  std::int64_t chosenSecond = 0;
  for (const auto& [key, obj] : state.objects(ObjectKind::kDeviceClass)) {
    if (obj->projection().getBody().getDeviceClass().getExtendedResourceName() != resource)
      continue;
    // creationTimestamp has second granularity; the map is name-ordered, so
    // on a tie the first seen (smallest name) stays chosen.
    const std::int64_t second = obj->projection().getCreationNs() / 1000000000;
    if (chosen == nullptr || second > chosenSecond) {
      chosen = obj.get();
      chosenSecond = second;
    }
  }
  return chosen;
}

void chargeExtendedResources(DraContext& ctx, schema::Workload::Reader wl, WorkloadCharge& out) {
  std::vector<FieldError> errors;
  std::map<std::string, PodSetCharge> charges;
  auto podSets = wl.getPodSets();
  for (unsigned i = 0; i < podSets.size(); ++i) {
    auto ps = podSets[i];
    const std::string p = indexed("spec.podSets", i) + ".template.spec";
    struct Entry {
      std::string path;
      Quantity quantity;
    };
    std::map<std::string, std::vector<Entry>> byName;  // every container's request
    ResourceList initMax, regularSum;
    auto collect = [&](capnp::List<schema::Container>::Reader containers, const std::string& field,
                       bool init) {
      for (unsigned k = 0; k < containers.size(); ++k) {
        ResourceList reqs = containerRequests(containers[k], nullptr);
        ResourceList extended;
        for (const auto& [name, q] : reqs) {
          if (q.isNegative() || q.isZero() || !isExtendedResourceName(name)) continue;
          extended.emplace(name, q);
          byName[name].push_back(Entry{indexed(p + "." + field, k), q});
        }
        if (init) {
          maxInto(initMax, extended);
        } else {
          addInto(regularSum, extended);
        }
      }
    };
    // Upstream takes max(init) vs sum(regular) without sidecar semantics.
    collect(ps.getTemplate().getInitContainers(), "initContainers", true);
    collect(ps.getTemplate().getContainers(), "containers", false);
    ResourceList podRequest = regularSum;
    maxInto(podRequest, initMax);
    for (const auto& [name, qty] : podRequest) {
      const StoredObject* cls = deviceClassForExtendedResource(ctx.state, name);
      if (cls == nullptr) continue;  // not DRA-backed: the normal path charges it
      const std::string firstPath = byName[name].front().path;
      const std::string clsName(cls->name());
      auto mapped = ctx.mapper.lookup(clsName);
      const std::string key = mapped ? *mapped : name;
      if (mapped && !ctx.mapper.counters(clsName).empty()) {
        errors.push_back(FieldError::invalid(
            firstPath, name,
            "extended resource " + name + " resolves to DeviceClass " + clsName +
                " with counters configured; use ResourceClaimTemplates with CEL selectors for "
                "counter-based quota"));
        continue;
      }
      if (mapped && !ctx.mapper.capacities(clsName).empty()) {
        errors.push_back(FieldError::invalid(
            firstPath, name,
            "extended resource " + name + " resolves to DeviceClass " + clsName +
                " with capacity sources configured; use ResourceClaimTemplates with "
                "capacity.requests for capacity-based quota"));
        continue;
      }
      bool fractional = false;
      for (const Entry& e : byName[name]) {
        if (!e.quantity.isWhole()) {
          errors.push_back(FieldError::invalid(e.path + ".resources.requests." + name,
                                               e.quantity.toString(),
                                               "extended resource quantity must be an integer"));
          fractional = true;
        }
      }
      if (fractional) continue;
      if (!qty.toInt64()) {
        errors.push_back(FieldError::invalid(firstPath + ".resources.requests." + name,
                                             qty.toString(),
                                             "total extended resource quantity overflows int64"));
        continue;
      }
      PodSetCharge& c = charges[ps.getName().cStr()];
      c.replacedNames.insert(name);
      addInto(c.perPod, ResourceList{{key, Quantity::fromInt(*qty.toInt64())}});
    }
  }
  if (!errors.empty()) {
    for (auto& e : errors) out.errors.push_back(std::move(e));
    return;
  }
  for (auto& [ps, c] : charges) {
    PodSetCharge& into = out.podSets[ps];
    addInto(into.perPod, c.perPod);
    into.replacedNames.insert(c.replacedNames.begin(), c.replacedNames.end());
  }
}

}  // namespace ledger::replay::dra
