#include "replay/kueue/dra/held_amount.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "replay/kueue/dra/dra_context.h"

namespace ledger::replay::dra {

namespace {

// The largest value of `counter` the device consumes from any of its
// counter sets, as Kueue's counter path reads a device (pkg/dra/counters.go).
std::optional<Quantity> counterConsumed(const CatalogDevice& device, std::string_view counter) {
  std::optional<Quantity> best;
  for (auto consumption : device.device.getConsumesCounters()) {
    for (auto c : consumption.getCounters()) {
      if (textView(c.getKey()) != counter) continue;
      auto q = Quantity::tryParse(textView(c.getValue()));
      if (q && (!best || *q > *best)) best = q;
    }
  }
  return best;
}

std::string extendedResourceOf(const ClusterState& state, const std::string& cls) {
  const StoredObject* dc = state.find(ObjectKind::kDeviceClass, cls);
  if (dc == nullptr) return "";
  return dc->projection().getBody().getDeviceClass().getExtendedResourceName().cStr();
}

}  // namespace

// This is what kueue#13842 is about: a workload charged for less than its
// pods were given.
void addHeld(const HeldInputs& in, const std::string& cls, const CatalogDevice* device,
             schema::DeviceResult::Reader result, ResourceList& held, std::set<std::string>& lost) {
  const auto add = [&](const std::string& name, const Quantity& q) {
    try {
      held[name] = held[name] + q;
    } catch (const std::overflow_error&) {
      lost.insert(name);
    }
  };
  const auto& counters = in.mapper.counters(cls);
  const auto& capacities = in.mapper.capacities(cls);
  if (!counters.empty()) {
    if (device == nullptr) return;  // unpublished: UnpublishedDevice says so
    for (const auto& source : counters) {
      if (source.driver != device->driver) continue;
      if (!source.deviceSelector.empty()) {
        const SelectorSet set = compileSelectors(in.selectors, {source.deviceSelector});
        const cel::EvalResult m = matchSelectors(set, *device);
        if (!set.ok() || !m.ok() || !m.matched) continue;
      }
      if (auto q = counterConsumed(*device, source.counterName); q && !q->isNegative())
        add(source.quotaResource, *q);
    }
    return;
  }
  if (!capacities.empty()) {
    const auto name = in.mapper.lookup(cls);
    if (!name) return;
    for (const auto& source : capacities) {
      if (source.driver != textView(result.getDriver())) continue;
      for (auto c : result.getConsumedCapacity()) {
        if (textView(c.getKey()) != source.capacityName) continue;
        if (auto q = Quantity::tryParse(textView(c.getValue())); q && !q->isNegative())
          add(*name, *q);
      }
    }
    return;
  }
  if (auto name = in.mapper.lookup(cls)) {
    add(*name, Quantity::fromInt(1));
  } else if (const std::string ern = extendedResourceOf(in.state, cls); !ern.empty()) {
    add(ern, Quantity::fromInt(1));
  }
}

std::vector<std::string> chargeNames(const HeldInputs& in, const std::string& cls) {
  std::vector<std::string> names;
  if (auto m = in.mapper.lookup(cls)) names.push_back(*m);
  for (const auto& c : in.mapper.counters(cls)) names.push_back(c.quotaResource);
  if (const std::string ern = extendedResourceOf(in.state, cls); !ern.empty()) names.push_back(ern);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string resultClass(schema::ResourceClaim::Reader claim, schema::DeviceResult::Reader result) {
  const std::string_view request = textView(result.getRequest());
  const std::string_view requestName = request.substr(0, request.find('/'));
  std::string cls;
  for (auto req : claim.getRequests()) {
    if (textView(req.getName()) == requestName) cls = req.getDeviceClassName().cStr();
  }
  return cls;
}

}  // namespace ledger::replay::dra
