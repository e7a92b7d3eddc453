// Kueue's integer view of quantities for admission decisions: the units its
// scheduler computes in (pkg/resources ResourceValue: cpu in milli-units,
// everything else in whole units, rounded away from zero), the order it
// walks a pod set's resources in (pkg/resources/slice_requests.go: FNV-1a-64
// hash of the name, then the name), and how its messages print a number
// (pkg/resources/resource_formatter.go ResourceQuantity).
//
// Pure functions; thread-safe; never throw except std::bad_alloc.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "replay/fold/cluster_state.h"
#include "schema/k8s/quantity.h"

namespace ledger::replay::admission {

// Kueue's resources.Unlimited sentinel (math.MaxInt64); prints "<unlimited>".
inline constexpr Int128 kUnlimited = static_cast<Int128>(INT64_MAX);

// A quantity in Kueue units (resources.ResourceValue), capped at kUnlimited.
Int128 kueueUnits(const std::string& resource, const Quantity& q);

// Kueue units back to an exact quantity (cpu milli-units -> "1500m").
Quantity fromKueueUnits(const std::string& resource, Int128 value);

// ResourceFormatter.AmountQuantityString: cpu as a milli quantity; memory,
// ephemeral-storage, hugepages-* and the `binary` names (DRA counter and
// capacity quota names) canonical BinarySI ("5Mi", "2000Ki", "1536", "1k");
// everything else DecimalSI ("3", "15k"); kUnlimited as "<unlimited>".
std::string formatKueue(const std::string& resource, Int128 value,
                        const std::set<std::string>& binary = {});

// hash/fnv New64a over the name.
std::uint64_t fnv1a64(std::string_view name);

// The names sorted as Kueue's SliceRequests iterates them (hash, then name).
std::vector<std::string> kueueResourceOrder(std::vector<std::string> names);

// The quota names Kueue registers as byte-valued (cmd/kueue/main.go: the
// mapper's CounterBasedResourceNames and CapacityBasedResourceNames): names of
// deviceClassMappings that have counter or capacity sources.
std::set<std::string> binaryFormattedResources(const ClusterState& state);

}  // namespace ledger::replay::admission
