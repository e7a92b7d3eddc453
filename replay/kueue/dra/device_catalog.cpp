#include "replay/kueue/dra/device_catalog.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace ledger::replay::dra {

namespace {

using DeviceName = std::tuple<std::string_view, std::string_view, std::string_view>;

DeviceName nameOf(const CatalogDevice& d) { return {d.driver, d.pool, d.name}; }

// A DRA QualifiedName, "domain/id" or a bare id in the driver's domain,
// split without copying: (domain, id).
std::pair<std::string_view, std::string_view> splitName(std::string_view name,
                                                        std::string_view driver) {
  const auto slash = name.find('/');
  if (slash == std::string_view::npos) return {driver, name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

// A driver publishes the same version strings (driverVersion,
// cudaDriverVersion, ...) on every device: each is parsed once per catalog.
class ParsedVersions {
 public:
  const std::optional<cel::Semver>& parse(std::string_view text) {
    auto it = parsed_.find(text);
    if (it == parsed_.end()) it = parsed_.emplace(std::string(text), cel::parseSemver(text)).first;
    return it->second;
  }

 private:
  std::map<std::string, std::optional<cel::Semver>, std::less<>> parsed_;
};

// The map for `domain` in `maps`, added when missing (a device has one or
// two domains): the domain's name is copied only then.
template <typename Maps>
typename Maps::mapped_type& domainMap(Maps& maps, std::string_view domain) {
  auto it = maps.find(domain);
  if (it == maps.end()) it = maps.emplace(std::string(domain), typename Maps::mapped_type()).first;
  return it->second;
}

void buildCelDevice(CatalogDevice& d, ParsedVersions& versions) {
  d.celDevice.driver = d.driver;
  // DeviceMatches converts the attributes before evaluating and stops at the
  // first that fails, so only the first problem is the device's error.
  const auto fail = [&](std::string error) {
    if (d.inputError.empty()) d.inputError = std::move(error);
  };
  const auto attributes = d.device.getAttributes();
  for (auto attr : attributes) {
    const std::string_view attrName = textView(attr.getName());
    const auto [domain, id] = splitName(attrName, d.driver);
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
        const auto& sv = versions.parse(textView(value.getVersion()));
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
    cel::AttributeMap& inDomain = domainMap(d.celDevice.attributes, domain);
    if (inDomain.empty()) inDomain.reserve(attributes.size());  // room for all at once
    inDomain.insert_or_assign(std::string(id), std::move(v));
  }
  for (auto cap : d.device.getCapacity()) {
    const std::string_view capName = textView(cap.getName());
    const auto [domain, id] = splitName(capName, d.driver);
    auto q = Quantity::tryParse(textView(cap.getValue()));
    if (!q) {
      fail("capacity " + std::string(capName) + ": malformed quantity");
      continue;
    }
    domainMap(d.celDevice.capacity, domain).insert_or_assign(std::string(id), *q);
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
  ParsedVersions versions;
  for (CatalogDevice& d : devices_) buildCelDevice(d, versions);
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
