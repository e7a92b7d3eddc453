#include "replay/kueue/dra/device_catalog.h"

#include <algorithm>
#include <tuple>

namespace ledger::replay::dra {

std::pair<std::string, std::string> qualifiedName(std::string_view name, std::string_view driver) {
  auto slash = name.find('/');
  if (slash == std::string_view::npos) return {std::string(driver), std::string(name)};
  return {std::string(name.substr(0, slash)), std::string(name.substr(slash + 1))};
}

namespace {

using DeviceName = std::tuple<std::string_view, std::string_view, std::string_view>;

DeviceName nameOf(const CatalogDevice& d) { return {d.driver, d.pool, d.name}; }

void buildCelDevice(CatalogDevice& d) {
  d.celDevice.driver = d.driver;
  // DeviceMatches converts the attributes before evaluating and stops at the
  // first that fails, so only the first problem is the device's error.
  const auto fail = [&](std::string error) {
    if (d.inputError.empty()) d.inputError = std::move(error);
  };
  const auto attributes = d.device.getAttributes();
  for (auto attr : attributes) {
    const std::string_view attrName = textView(attr.getName());
    auto [domain, id] = qualifiedName(attrName, d.driver);
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
        v = std::string(textView(value.getString()));
        break;
      case schema::DeviceAttribute::Value::VERSION: {
        auto sv = cel::parseSemver(value.getVersion().cStr());
        if (!sv) {
          // k8s dynamic-resource-allocation/cel: every evaluation on this device fails.
          fail("attribute " + std::string(attrName) +
               ": parse semantic version: " + value.getVersion().cStr());
          continue;
        }
        v = *sv;
        break;
      }
      case schema::DeviceAttribute::Value::NONE:
        // getAttributeValue: no value set is an error for every evaluation
        // on the device, not an attribute that reads as "".
        fail("attribute " + std::string(attrName) + ": unsupported attribute value");
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
    auto [domain, id] = qualifiedName(textView(cap.getName()), d.driver);
    auto q = Quantity::tryParse(cap.getValue().cStr());
    if (!q) {
      fail("capacity " + std::string(textView(cap.getName())) + ": malformed quantity");
      continue;
    }
    d.celDevice.capacity[domain][id] = *q;
  }
}

}  // namespace

DeviceCatalog::DeviceCatalog(const ClusterState& state) {
  const auto& slices = state.objects(ObjectKind::kResourceSlice);
  // Newest generation per pool first, so older slices can be left out.
  std::size_t total = 0;
  for (const auto& [key, obj] : slices) {
    auto s = obj->projection().getBody().getResourceSlice();
    total += s.getDevices().size();
    const std::pair<std::string, std::string> poolKey{textView(s.getDriver()),
                                                      textView(s.getPool())};
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
  devices_.reserve(total);  // pointers into devices_ must stay valid
  for (const auto& [key, obj] : slices) {
    auto s = obj->projection().getBody().getResourceSlice();
    const std::string_view driver = textView(s.getDriver());
    const std::string_view poolName = textView(s.getPool());
    Pool& pool = pools_.find({std::string(driver), std::string(poolName)})->second;
    const std::int64_t generation = s.getPoolGeneration();
    const bool current = generation == pool.generation;
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
      CatalogDevice& d = devices_.emplace_back();
      d.driver = driver;
      d.pool = poolName;
      d.name = textView(dev.getName());
      d.sliceName = obj->name();
      d.generation = generation;
      d.device = dev;
      if (current) {
        pool.devices.push_back(&d);
        byName_.push_back(&d);
      }
    }
  }
  for (auto& [k, pool] : pools_) {
    pool.complete = static_cast<std::int64_t>(pool.slicesPresent) == pool.resourceSliceCount;
  }
  // Stable, then the last of equal names kept: a later slice naming the same
  // device of the same generation replaces the earlier one, as it always has.
  std::stable_sort(
      byName_.begin(), byName_.end(),
      [](const CatalogDevice* a, const CatalogDevice* b) { return nameOf(*a) < nameOf(*b); });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < byName_.size(); ++i) {
    if (kept > 0 && nameOf(*byName_[kept - 1]) == nameOf(*byName_[i])) {
      byName_[kept - 1] = byName_[i];
    } else {
      byName_[kept++] = byName_[i];
    }
  }
  byName_.resize(kept);
  for (CatalogDevice& d : devices_) buildCelDevice(d);
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
  const DeviceName wanted{driver, pool, device};
  auto it =
      std::lower_bound(byName_.begin(), byName_.end(), wanted,
                       [](const CatalogDevice* d, const DeviceName& w) { return nameOf(*d) < w; });
  return it != byName_.end() && nameOf(**it) == wanted ? *it : nullptr;
}

}  // namespace ledger::replay::dra
