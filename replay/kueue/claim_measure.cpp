#include "replay/kueue/claim_measure.h"

#include <algorithm>
#include <climits>
#include <set>
#include <stdexcept>

#include "replay/kueue/dra/held_amount.h"

namespace ledger::replay {

const dra::ResourceMapper& ClaimMeasure::currentMapper() {
  const StoredObject* source = state_.draConfig();
  if (!mapper_ || source != mapperSource_) {
    mapper_ = source != nullptr ? dra::ResourceMapper(source->projection().getBody().getDraConfig())
                                : dra::ResourceMapper();
    mapperSource_ = source;
  }
  return *mapper_;
}

ResourceList ClaimMeasure::measure(schema::ResourceClaim::Reader claim) {
  ResourceList out;
  provisional_ = false;
  if (!claim.getAllocated()) return out;
  const dra::ResourceMapper& mapping = currentMapper();
  const dra::HeldInputs in{state_, mapping, selectors_};
  std::set<std::string> lost;  // past the exact range: left out, as the audit does
  for (auto result : claim.getResults()) {
    if (result.getAdminAccess()) continue;  // admin access holds nothing (KEP-5018)
    const std::string cls = dra::resultClass(claim, result);
    // Only a counter mapping reads the published device; building the
    // catalog (every device of every slice) for the rest was most of a
    // period's cost on a cluster whose slices change.
    if (mapping.counters(cls).empty()) {
      dra::addHeld(in, cls, nullptr, result, out, lost);
      continue;
    }
    // The counters a published device consumes are part of what it is (a
    // partition's profile): read once per mapping, from the slices of the
    // first record that shows it allocated.
    std::string deviceKey = cls;
    for (auto part : {result.getDriver(), result.getPool(), result.getDevice()})
      (deviceKey += '\0') += textView(part);
    auto cached = counterHeld_.find(deviceKey);
    if (cached == counterHeld_.end()) {
      std::optional<dra::CatalogDevice> found;
      const dra::CatalogDevice* device = nullptr;
      if (selectsDevices(mapping, cls)) {
        if (!catalog_) catalog_ = std::make_unique<dra::DeviceCatalog>(state_);
        device = catalog_->find(result.getDriver().cStr(), result.getPool().cStr(),
                                result.getDevice().cStr());
      } else if ((found = publishedDevice(result))) {
        device = &*found;
      }
      ResourceList one;
      std::set<std::string> oneLost;
      dra::addHeld(in, cls, device, result, one, oneLost);
      if (device == nullptr || !oneLost.empty()) {
        addInto(out, one);  // unpublished for now: asked again next time
        provisional_ = true;
        continue;
      }
      cached = counterHeld_.emplace(std::move(deviceKey), std::move(one)).first;
    }
    for (const auto& [name, q] : cached->second) {
      try {
        out[name] = out[name] + q;
      } catch (const std::overflow_error&) {
        lost.insert(name);
      }
    }
  }
  return out;
}

// Whether a counter source of the class selects devices by CEL, which
// needs the catalog's view of a device (its attributes for CEL).
bool ClaimMeasure::selectsDevices(const dra::ResourceMapper& mapping, const std::string& cls) {
  for (const auto& source : mapping.counters(cls)) {
    if (!source.deviceSelector.empty()) return true;
  }
  return false;
}

// The device of the pool's newest generation that names it, read from the
// slices directly: what DeviceCatalog::find gives, without building the
// whole catalog (every device of every slice) for one device.
std::optional<dra::CatalogDevice> ClaimMeasure::publishedDevice(
    schema::DeviceResult::Reader result) const {
  const std::string_view driver = textView(result.getDriver());
  const std::string_view pool = textView(result.getPool());
  const std::string_view name = textView(result.getDevice());
  std::optional<dra::CatalogDevice> out;
  std::int64_t newest = INT64_MIN;
  for (const auto& [key, obj] : state_.objects(ObjectKind::kResourceSlice)) {
    auto slice = obj->projection().getBody().getResourceSlice();
    if (textView(slice.getDriver()) != driver || textView(slice.getPool()) != pool) continue;
    newest = std::max(newest, slice.getPoolGeneration());
  }
  for (const auto& [key, obj] : state_.objects(ObjectKind::kResourceSlice)) {
    auto slice = obj->projection().getBody().getResourceSlice();
    if (textView(slice.getDriver()) != driver || textView(slice.getPool()) != pool ||
        slice.getPoolGeneration() != newest)
      continue;
    for (auto d : slice.getDevices()) {
      if (textView(d.getName()) != name) continue;
      out.emplace();
      out->driver = textView(slice.getDriver());
      out->pool = textView(slice.getPool());
      out->name = textView(d.getName());
      out->sliceName = obj->name();
      out->generation = newest;
      out->device = d;
      return out;
    }
  }
  return out;
}

void ClaimMeasure::slicesChanged() { catalog_.reset(); }

bool ClaimMeasure::inputsChanged(bool deviceClass) {
  const bool mapping = state_.draConfig() != mapperSource_;
  if (!mapping && !deviceClass) return false;
  if (mapping) mapper_.reset();
  counterHeld_.clear();
  return true;
}

}  // namespace ledger::replay
