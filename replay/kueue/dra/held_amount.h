// What an allocated device holds of the quota resources Kueue could charge
// it under: one device for a mapped class (or the extended resource a class
// backs), the units of the counter or capacity the mapping's sources name
// otherwise. The state audit (UnchargedDRA, UnderchargedDRA) and the held
// integral of the usage report (replay/kueue/held_tracker.h) both measure a
// pod's devices this way, so a finding and a report row agree.
//
// Borrows everything; not thread-safe (the selector cache). Never throws
// for odd objects: an unpublished device or an unmapped class holds nothing.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "replay/cel/device_selector.h"
#include "replay/fold/cluster_state.h"
#include "replay/kueue/dra/device_catalog.h"
#include "replay/kueue/dra/resource_mapper.h"
#include "replay/kueue/resources.h"

namespace ledger::replay::dra {

struct HeldInputs {
  const ClusterState& state;  // DeviceClasses
  const ResourceMapper& mapper;
  cel::SelectorCache& selectors;
};

// Adds what `result`, a device of class `cls` allocated to a claim, holds to
// `held` (quota resource -> amount). A sum past Quantity's exact range is
// left out of `held` and its resource named in `lost`. `device` is the
// published device, nullptr when no current slice publishes it.
void addHeld(const HeldInputs& in, const std::string& cls, const CatalogDevice* device,
             schema::DeviceResult::Reader result, ResourceList& held, std::set<std::string>& lost);

// The resource names Kueue could have charged a device of class `cls`
// under, sorted: the mapped name, the counter sources' quota resources and
// the extended resource the DeviceClass backs.
std::vector<std::string> chargeNames(const HeldInputs& in, const std::string& cls);

// The DeviceClass of a claim's allocation result: the class its request
// (the result's request up to the first '/', a subrequest's parent) names;
// empty when none does.
std::string resultClass(schema::ResourceClaim::Reader claim, schema::DeviceResult::Reader result);

}  // namespace ledger::replay::dra
