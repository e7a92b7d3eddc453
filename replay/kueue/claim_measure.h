// What an allocated ResourceClaim holds, per quota resource, as the held
// integral measures it (replay/kueue/held_tracker.h): each allocated device
// through replay/kueue/dra/held_amount.h, with the mapping in force in a
// ClusterState that changes between calls.
//
// A device under a counter mapping is read from the slices once per mapping
// (its counters are what the device is, a partition's profile) and kept;
// without a CEL device selector it is found in its pool's slices directly,
// without building the catalog of every published device.
//
// Borrows the state, which must outlive it; the caller says when slices,
// DeviceClasses or the configuration may have changed. Single-threaded.
// Never throws for odd objects (they hold nothing); kj::Exception for a
// record that does not decode.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "replay/cel/device_selector.h"
#include "replay/fold/cluster_state.h"
#include "replay/kueue/dra/device_catalog.h"
#include "replay/kueue/dra/resource_mapper.h"
#include "replay/kueue/resources.h"

namespace ledger::replay {

class ClaimMeasure {
 public:
  explicit ClaimMeasure(const ClusterState& state) : state_(state) {}

  // What `claim` holds now (empty when it is not allocated).
  ResourceList measure(schema::ResourceClaim::Reader claim);
  // Whether the last measure() left a device under a counter mapping out
  // for now (not published yet, or past the exact range): measuring the
  // same allocation again later may give more.
  bool lastMeasureProvisional() const { return provisional_; }
  // A ResourceSlice changed: the catalog is built again when needed.
  void slicesChanged();
  // Whether the mapping in force changed or `deviceClass` (a DeviceClass
  // changed): then what was kept is dropped, and claims should be measured
  // again.
  bool inputsChanged(bool deviceClass);

 private:
  const dra::ResourceMapper& currentMapper();
  static bool selectsDevices(const dra::ResourceMapper& mapping, const std::string& cls);
  std::optional<dra::CatalogDevice> publishedDevice(schema::DeviceResult::Reader result) const;

  const ClusterState& state_;
  std::optional<dra::ResourceMapper> mapper_;
  const StoredObject* mapperSource_ = nullptr;
  std::unique_ptr<dra::DeviceCatalog> catalog_;
  cel::SelectorCache selectors_;
  // (class, driver, pool, device) -> what that device holds under a counter
  // mapping.
  std::unordered_map<std::string, ResourceList> counterHeld_;
  bool provisional_ = false;
};

}  // namespace ledger::replay
