// The devices ResourceSlices publish, as DRA sees them (resource.k8s.io/v1):
// pools per (driver, pool name) at their newest generation - a newer
// generation replaces the pool at once, even while it is still incomplete -
// and `complete` when all resourceSliceCount slices of that generation are
// present. A partitionable pool spans slices: one with sharedCounters, others
// with devices and their consumesCounters.
//
// Ownership: borrows the ClusterState, which must not change while the
// catalog is used (readers and the devices' names point into it).
// Thread-compatible. Throws only what allocation throws, and kj::Exception
// for a stored object that does not decode.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "replay/cel/device_selector.h"
#include "replay/fold/cluster_state.h"
#include "schema/k8s/quantity.h"

namespace ledger::replay::dra {

struct CatalogDevice {
  // Views of the ResourceSlice's own strings, in the borrowed state.
  std::string_view driver;
  std::string_view pool;
  std::string_view name;
  std::string_view sliceName;
  std::int64_t generation = 0;
  schema::Device::Reader device;
  cel::Device celDevice;   // what a CEL selector sees
  std::string inputError;  // why the device cannot be a CEL input (the first problem)
};

struct CounterSetCapacity {
  std::string counterSet;
  std::map<std::string, Quantity> counters;
};

struct Pool {
  std::string driver;
  std::string name;
  std::int64_t generation = 0;
  std::int64_t resourceSliceCount = 0;
  std::size_t slicesPresent = 0;
  bool complete = false;
  std::vector<CounterSetCapacity> counterSets;  // sharedCounters, in slice order
  std::vector<const CatalogDevice*> devices;
};

class DeviceCatalog {
 public:
  explicit DeviceCatalog(const ClusterState& state);
  DeviceCatalog(const DeviceCatalog&) = delete;
  DeviceCatalog& operator=(const DeviceCatalog&) = delete;

  // Pools keyed by (driver, pool), sorted.
  const std::map<std::pair<std::string, std::string>, Pool>& pools() const { return pools_; }
  // Every device of every slice, in slice-name order (what Kueue's
  // ListAll sees: no pool or generation filtering).
  const std::vector<CatalogDevice>& allDevices() const { return devices_; }
  // Devices of complete pools at their newest generation, for one driver.
  std::vector<const CatalogDevice*> completePoolDevices(const std::string& driver) const;
  // The device of a pool's current generation, or nullptr.
  const CatalogDevice* find(const std::string& driver, const std::string& pool,
                            const std::string& device) const;
  // Problems met while reading slices (malformed counter quantities, ...).
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<CatalogDevice> devices_;
  std::map<std::pair<std::string, std::string>, Pool> pools_;
  // The devices of current generations, sorted by (driver, pool, name):
  // sorted once, where a map allocated and rebalanced a node per device.
  std::vector<const CatalogDevice*> byName_;
  std::vector<std::string> problems_;
};

}  // namespace ledger::replay::dra
