// What was actually allocated (ResourceClaim status.allocation), attributed
// claim -> Pod -> owner (Job) -> Workload -> ClusterQueue by uid, beside what
// the pools publish. Findings: CounterOvercommitted, DeviceDoubleAllocated,
// UnchargedDRA, UnderchargedDRA, UnpublishedDevice.
#include <algorithm>
#include <optional>

#include "replay/kueue/audit.h"
#include "replay/kueue/claim_attribution.h"
#include "replay/kueue/dra/held_amount.h"

namespace ledger::replay {

namespace {

std::string nsName(std::string_view ns, std::string_view name) {
  return ClusterState::key(ns, name);
}

}  // namespace

std::vector<PoolReport> auditPools(AuditContext& ctx, std::vector<WorkloadAudit>& wls,
                                   std::vector<ClusterQueueReport>& queues) {
  std::map<std::pair<std::string, std::string>, PoolReport> pools;
  for (const auto& [key, pool] : ctx.catalog.pools()) {
    PoolReport p;
    p.driver = pool.driver;
    p.pool = pool.name;
    p.generation = pool.generation;
    p.complete = pool.complete;
    p.resourceSliceCount = pool.resourceSliceCount;
    p.devices = pool.devices.size();
    for (const auto& set : pool.counterSets) {
      for (const auto& [counter, capacity] : set.counters) {
        p.counters.push_back(CounterReport{set.counterSet, counter, capacity, Quantity(), false});
      }
    }
    pools.emplace(key, std::move(p));
  }
  for (const auto& problem : ctx.catalog.problems())
    ctx.finding("MalformedQuantity", "ResourceSlice", problem);

  Attributor attributor(ctx.state, wls);
  std::map<std::string, ClusterQueueReport*> queueByName;
  for (auto& q : queues) queueByName[q.name] = &q;
  // (driver, pool, device) -> claims holding it
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> holders;
  std::map<std::string, std::map<std::pair<std::string, std::string>, Quantity>> heldCounters;
  // What each reserved workload's pods hold, per quota resource.
  std::map<const WorkloadAudit*, ResourceList> heldByWorkload;
  // Sums past the exact range (QuantityOverflow findings), left out.
  std::map<const WorkloadAudit*, std::set<std::string>> lostHeld;
  std::set<std::pair<std::string, std::pair<std::string, std::string>>> lostHeldCounters;

  for (const auto& [key, claimObj] : ctx.state.objects(ObjectKind::kResourceClaim)) {
    auto claim = claimObj->projection().getBody().getResourceClaim();
    if (!claim.getAllocated()) continue;
    const Attribution who = attributor.attribute(*claimObj);
    const std::string claimRef = nsName(claimObj->ns(), claimObj->name());
    for (auto result : claim.getResults()) {
      AllocationReport a;
      a.device = result.getDevice().cStr();
      a.request = result.getRequest().cStr();
      a.claim = claimRef;
      if (who.pod != nullptr) a.pod = nsName(who.pod->ns(), who.pod->name());
      if (who.workload != nullptr) {
        a.workload = nsName(who.workload->report.ns, who.workload->report.name);
        a.clusterQueue = who.workload->report.clusterQueue;
      }
      const std::string driver = result.getDriver().cStr();
      const std::string poolName = result.getPool().cStr();
      const dra::CatalogDevice* device = ctx.catalog.find(driver, poolName, a.device);
      a.published = device != nullptr;
      if (!a.published) {
        ctx.finding("UnpublishedDevice",
                    objectRef("ResourceClaim", claimObj->ns(), claimObj->name()),
                    "allocated device " + driver + "/" + poolName + "/" + a.device +
                        " is not published by any current ResourceSlice");
      }
      if (!result.getAdminAccess()) holders[{driver, poolName, a.device}].push_back(claimRef);
      auto poolIt = pools.find({driver, poolName});
      if (device != nullptr && poolIt != pools.end() && !result.getAdminAccess()) {
        for (auto consumption : device->device.getConsumesCounters()) {
          const std::string_view counterSet = textView(consumption.getCounterSet());
          for (auto c : consumption.getCounters()) {
            auto q = Quantity::tryParse(textView(c.getValue()));
            if (!q) continue;
            const std::string_view counter = textView(c.getKey());
            for (auto& cr : poolIt->second.counters) {
              if (cr.counterSet == counterSet && cr.counter == counter &&
                  !addExact(cr.consumed, *q)) {
                cr.consumedUnrepresentable = true;
              }
            }
            const std::pair<std::string, std::string> key{driver, std::string(counter)};
            if (!a.clusterQueue.empty() && !addExact(heldCounters[a.clusterQueue][key], *q)) {
              lostHeldCounters.insert({a.clusterQueue, key});
            }
          }
        }
      }
      if (auto q = queueByName.find(a.clusterQueue); q != queueByName.end())
        ++q->second->heldDevices;
      // UnchargedDRA: a reserved workload holds a device its usage does not charge.
      if (who.workload != nullptr && who.workload->report.quotaReserved &&
          !who.workload->report.finished && !result.getAdminAccess()) {
        const std::string cls = dra::resultClass(claim, result);
        const dra::HeldInputs in{ctx.state, ctx.mapper, ctx.selectors};
        dra::addHeld(in, cls, device, result, heldByWorkload[who.workload], lostHeld[who.workload]);
        const auto names = dra::chargeNames(in, cls);
        const auto& recorded = who.workload->report.recorded;
        const bool charged = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
          auto it = recorded.find(n);
          return it != recorded.end() && !it->second.isZero() && !it->second.isNegative();
        });
        if (!charged) {
          std::string list;
          for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
          ctx.finding("UnchargedDRA",
                      objectRef("Workload", who.workload->report.ns, who.workload->report.name),
                      "holds device " + driver + "/" + poolName + "/" + a.device +
                          " (DeviceClass " + (cls.empty() ? std::string("unknown") : cls) +
                          ") through claim " + claimRef + ", but its recorded usage charges " +
                          (list.empty() ? std::string("nothing for it (the class is not mapped)")
                                        : "none of: " + list));
        }
      }
      if (poolIt != pools.end()) poolIt->second.allocations.push_back(std::move(a));
    }
  }
  for (const auto& [dev, claims] : holders) {
    if (claims.size() < 2) continue;
    const dra::CatalogDevice* device =
        ctx.catalog.find(std::get<0>(dev), std::get<1>(dev), std::get<2>(dev));
    if (device != nullptr && device->device.getAllowMultipleAllocations()) continue;
    std::string list;
    for (const auto& c : claims) list += (list.empty() ? "" : ", ") + c;
    ctx.finding("DeviceDoubleAllocated",
                "ResourceSlice device " + std::get<0>(dev) + "/" + std::get<1>(dev) + "/" +
                    std::get<2>(dev),
                "allocated to " + std::to_string(claims.size()) + " claims: " + list);
  }
  // UnderchargedDRA: charged, but for less than the pods hold. A resource
  // not charged at all is UnchargedDRA's.
  for (const auto& [w, held] : heldByWorkload) {
    const std::set<std::string>& lost = lostHeld[w];
    for (const auto& name : lost) {
      ctx.overflow(objectRef("Workload", w->report.ns, w->report.name),
                   "what its pods hold of " + name + " through allocated ResourceClaims");
    }
    for (const auto& [name, amount] : held) {
      if (lost.count(name) != 0) continue;
      auto r = w->report.recorded.find(name);
      if (r == w->report.recorded.end() || r->second.isZero() || r->second.isNegative()) continue;
      if (!(r->second < amount)) continue;
      ctx.finding("UnderchargedDRA", objectRef("Workload", w->report.ns, w->report.name),
                  "its pods hold " + amount.toString() + " of " + name +
                      " through allocated ResourceClaims, but its recorded usage charges " +
                      r->second.toString());
    }
  }
  std::vector<PoolReport> out;
  for (auto& [key, p] : pools) {
    for (const auto& c : p.counters) {
      if (c.consumedUnrepresentable) {
        ctx.overflow("Pool " + p.driver + "/" + p.pool, "counter set " + c.counterSet +
                                                            " counter " + c.counter +
                                                            ": what its allocated devices consume");
      } else if (c.consumed > c.capacity) {
        ctx.finding("CounterOvercommitted", "Pool " + p.driver + "/" + p.pool,
                    "counter set " + c.counterSet + " counter " + c.counter + ": consumed " +
                        c.consumed.toString() + " exceeds capacity " + c.capacity.toString());
      }
    }
    std::sort(p.allocations.begin(), p.allocations.end(),
              [](const AllocationReport& a, const AllocationReport& b) {
                return std::tie(a.device, a.claim, a.request) <
                       std::tie(b.device, b.claim, b.request);
              });
    out.push_back(std::move(p));
  }
  for (auto& [queue, counters] : heldCounters) {
    auto q = queueByName.find(queue);
    if (q == queueByName.end()) continue;
    for (auto& [k, v] : counters)
      q->second->heldCounters.push_back(
          HeldCounter{k.first, k.second, v, lostHeldCounters.count({queue, k}) != 0});
  }
  for (const auto& [queue, k] : lostHeldCounters) {
    ctx.overflow(objectRef("ClusterQueue", "", queue),
                 "counter " + k.first + "/" + k.second + " its workloads' devices hold");
  }
  return out;
}

}  // namespace ledger::replay
