#include "replay/kueue/dra/resource_mapper.h"

namespace ledger::replay::dra {

ResourceMapper::ResourceMapper(schema::DraConfig::Reader config) {
  for (auto mapping : config.getMappings()) {
    const std::string name = mapping.getName().cStr();
    for (auto cls : mapping.getDeviceClassNames()) {
      const std::string deviceClass = cls.cStr();
      classToResource_.emplace(deviceClass, name);  // first mapping wins
      for (auto source : mapping.getSources()) {
        if (source.isCounter()) {
          auto c = source.getCounter();
          counters_[deviceClass].push_back(CounterSourceConfig{
              name, c.getDriver().cStr(), c.getName().cStr(), c.getDeviceSelector().cStr()});
        } else if (source.isCapacity()) {
          auto c = source.getCapacity();
          capacities_[deviceClass].push_back(CapacitySourceConfig{
              c.getDriver().cStr(), c.getName().cStr(), c.getDeviceSelector().cStr()});
        }
      }
    }
  }
}

std::optional<std::string> ResourceMapper::lookup(const std::string& deviceClass) const {
  auto it = classToResource_.find(deviceClass);
  if (it == classToResource_.end()) return std::nullopt;
  return it->second;
}

const std::vector<CounterSourceConfig>& ResourceMapper::counters(
    const std::string& deviceClass) const {
  static const std::vector<CounterSourceConfig> kNone;
  auto it = counters_.find(deviceClass);
  return it == counters_.end() ? kNone : it->second;
}

const std::vector<CapacitySourceConfig>& ResourceMapper::capacities(
    const std::string& deviceClass) const {
  static const std::vector<CapacitySourceConfig> kNone;
  auto it = capacities_.find(deviceClass);
  return it == capacities_.end() ? kNone : it->second;
}

}  // namespace ledger::replay::dra
