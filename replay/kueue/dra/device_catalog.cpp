#include "replay/kueue/dra/device_catalog.h"

#include <tuple>

namespace ledger::replay::dra {

std::pair<std::string, std::string> qualifiedName(const std::string& name,
                                                  const std::string& driver) {
  auto slash = name.find('/');
  if (slash == std::string::npos) return {driver, name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

namespace {

void buildCelDevice(CatalogDevice& d) {
  d.celDevice.driver = d.driver;
  // DeviceMatches converts the attributes before evaluating and stops at the
  // first that fails, so only the first problem is the device's error.
  const auto fail = [&](std::string error) {
    if (d.inputError.empty()) d.inputError = std::move(error);
  };
  const auto attributes = d.device.getAttributes();
  for (auto attr : attributes) {
    auto [domain, id] = qualifiedName(attr.getName().cStr(), d.driver);
    auto value = attr.getValue();
    cel::AttributeValue v;
    switch (value.which()) {
      case schema::DeviceAttribute::Value::BOOL:
        v = value.getBool();
        break;
      case schema::DeviceAttribute::Value::INT:
        v = value.getInt();
        break;
      case schema::DeviceAttribute::Value::STRING:
        v = std::string(value.getString().cStr());
        break;
      case schema::DeviceAttribute::Value::VERSION: {
        auto sv = cel::parseSemver(value.getVersion().cStr());
        if (!sv) {
          // k8s dynamic-resource-allocation/cel: every evaluation on this device fails.
          fail("attribute " + std::string(attr.getName().cStr()) +
               ": parse semantic version: " + value.getVersion().cStr());
          continue;
        }
        v = *sv;
        break;
      }
      case schema::DeviceAttribute::Value::NONE:
        // getAttributeValue: no value set is an error for every evaluation
        // on the device, not an attribute that reads as "".
        fail("attribute " + std::string(attr.getName().cStr()) + ": unsupported attribute value");
        continue;
    }
    auto inDomain = d.celDevice.attributes.find(domain);
    if (inDomain == d.celDevice.attributes.end()) {
      // Room for every attribute at once: a device has one or two domains.
      inDomain = d.celDevice.attributes.emplace(std::move(domain), cel::AttributeMap()).first;
      inDomain->second.reserve(attributes.size());
    }
    inDomain->second.insert_or_assign(std::move(id), std::move(v));
  }
  for (auto cap : d.device.getCapacity()) {
    auto [domain, id] = qualifiedName(cap.getName().cStr(), d.driver);
    auto q = Quantity::tryParse(cap.getValue().cStr());
    if (!q) {
      fail("capacity " + std::string(cap.getName().cStr()) + ": malformed quantity");
      continue;
    }
    d.celDevice.capacity[domain][id] = *q;
  }
}

}  // namespace

DeviceCatalog::DeviceCatalog(const ClusterState& state) {
  const auto& slices = state.objects(ObjectKind::kResourceSlice);
  // Newest generation per pool first, so older slices can be left out.
  for (const auto& [key, obj] : slices) {
    auto s = obj->projection().getBody().getResourceSlice();
    const std::pair<std::string, std::string> poolKey{s.getDriver().cStr(), s.getPool().cStr()};
    auto [it, inserted] = pools_.try_emplace(poolKey);
    Pool& pool = it->second;
    if (inserted || s.getPoolGeneration() > pool.generation) {
      pool.driver = poolKey.first;
      pool.name = poolKey.second;
      pool.generation = s.getPoolGeneration();
      pool.resourceSliceCount = s.getResourceSliceCount();
      pool.slicesPresent = 0;
    }
  }
  std::size_t total = 0;
  for (const auto& [key, obj] : slices) {
    total += obj->projection().getBody().getResourceSlice().getDevices().size();
  }
  devices_.reserve(total);  // pointers into devices_ must stay valid
  for (const auto& [key, obj] : slices) {
    auto s = obj->projection().getBody().getResourceSlice();
    Pool& pool = pools_[{s.getDriver().cStr(), s.getPool().cStr()}];
    const bool current = s.getPoolGeneration() == pool.generation;
    if (current) {
      ++pool.slicesPresent;
      for (auto set : s.getSharedCounters()) {
        CounterSetCapacity cs;
        cs.counterSet = set.getName().cStr();
        for (auto c : set.getCounters()) {
          if (auto q = Quantity::tryParse(c.getValue().cStr())) {
            cs.counters.emplace(c.getKey().cStr(), *q);
          } else {
            problems_.push_back("ResourceSlice " + std::string(obj->name()) + " counter " +
                                cs.counterSet + "/" + c.getKey().cStr() + ": malformed quantity");
          }
        }
        pool.counterSets.push_back(std::move(cs));
      }
    }
    for (auto dev : s.getDevices()) {
      CatalogDevice d;
      d.driver = s.getDriver().cStr();
      d.pool = s.getPool().cStr();
      d.name = dev.getName().cStr();
      d.sliceName = obj->name();
      d.generation = s.getPoolGeneration();
      d.device = dev;
      buildCelDevice(d);
      devices_.push_back(std::move(d));
      if (current) {
        pool.devices.push_back(&devices_.back());
        const CatalogDevice& added = devices_.back();
        byName_[{added.driver, added.pool, added.name}] = &added;
      }
    }
  }
  for (auto& [k, pool] : pools_) {
    pool.complete = static_cast<std::int64_t>(pool.slicesPresent) == pool.resourceSliceCount;
  }
}

std::vector<const CatalogDevice*> DeviceCatalog::completePoolDevices(
    const std::string& driver) const {
  std::vector<const CatalogDevice*> out;
  for (auto it = pools_.lower_bound({driver, ""}); it != pools_.end() && it->first.first == driver;
       ++it) {
    if (!it->second.complete) continue;
    out.insert(out.end(), it->second.devices.begin(), it->second.devices.end());
  }
  return out;
}

const CatalogDevice* DeviceCatalog::find(const std::string& driver, const std::string& pool,
                                         const std::string& device) const {
  auto it = byName_.find({driver, pool, device});
  return it == byName_.end() ? nullptr : it->second;
}

}  // namespace ledger::replay::dra
