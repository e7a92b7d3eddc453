// DeviceClass -> quota resource mapping from the DRA configuration in force
// (Kueue pkg/dra/mapper.go ResourceMapper.PopulateFromConfiguration):
// the first mapping that names a class decides its resource name; counter and
// capacity sources accumulate per class, in configuration order, each counter
// source charging its own mapping's name.
//
// Value type built once per report; thread-compatible; never throws.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schema/projection.capnp.h"

namespace ledger::replay::dra {

struct CounterSourceConfig {
  std::string quotaResource;  // the mapping's name
  std::string driver;
  std::string counterName;
  std::string deviceSelector;  // CEL; empty = every device of the driver
};

struct CapacitySourceConfig {
  std::string driver;
  std::string capacityName;  // a device capacity dimension (QualifiedName)
  std::string deviceSelector;
};

class ResourceMapper {
 public:
  ResourceMapper() = default;
  explicit ResourceMapper(schema::DraConfig::Reader config);

  std::optional<std::string> lookup(const std::string& deviceClass) const;
  const std::vector<CounterSourceConfig>& counters(const std::string& deviceClass) const;
  const std::vector<CapacitySourceConfig>& capacities(const std::string& deviceClass) const;
  bool hasSources(const std::string& deviceClass) const {
    return !counters(deviceClass).empty() || !capacities(deviceClass).empty();
  }

 private:
  std::map<std::string, std::string, std::less<>> classToResource_;
  std::map<std::string, std::vector<CounterSourceConfig>, std::less<>> counters_;
  std::map<std::string, std::vector<CapacitySourceConfig>, std::less<>> capacities_;
};

}  // namespace ledger::replay::dra
