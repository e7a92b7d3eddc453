// What the DRA charging rules read: the folded objects, the mapping in force,
// the device catalog, a cache of compiled CEL selectors and one of the
// devices each selector combination matched.
//
// Borrowed references; all must outlive the context. Not thread-safe (the
// caches are mutable).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "replay/cel/device_selector.h"
#include "replay/fold/cluster_state.h"
#include "replay/kueue/dra/device_catalog.h"
#include "replay/kueue/dra/field_error.h"
#include "replay/kueue/dra/resource_mapper.h"

namespace ledger::replay::dra {

// The answer to "which devices of this driver match these selectors": every
// workload created from the same template asks the same question of the same
// catalog, and evaluating CEL over every published device was most of a
// state report. Keyed by driver, selectors and the request's field path
// (which the errors name).
struct DeviceMatch {
  bool ok = true;
  std::vector<const CatalogDevice*> devices;
  std::vector<FieldError> errors;
  // Largest consumesCounters value per counter name over `devices`, filled on demand.
  mutable std::map<std::string, std::optional<Quantity>, std::less<>> counterMaximum;
};
using DeviceMatchCache = std::map<std::string, DeviceMatch, std::less<>>;

struct DraContext {
  const ClusterState& state;
  const ResourceMapper& mapper;
  const DeviceCatalog& catalog;
  cel::SelectorCache& selectors;
  DeviceMatchCache& matches;  // valid for this catalog only
  // Set when a charge consulted the published devices: then a charge
  // computed on another set of ResourceSlices may differ (the audit's
  // as-of-reservation check, replay/kueue/charge_at_reservation.h).
  bool catalogRead = false;
};

// A list of CEL expressions compiled together (all must hold: AND).
struct SelectorSet {
  std::vector<const cel::DeviceSelector*> compiled;
  std::vector<std::string> expressions;
  int failedIndex = -1;  // first expression that does not compile
  // dracel's CompilationResult.Error.Detail, already "compilation failed: ..."
  // for a CEL issue; callers add only Kueue's own context before it.
  std::string compileError;
  bool ok() const { return failedIndex < 0; }
};

SelectorSet compileSelectors(cel::SelectorCache& cache,
                             const std::vector<std::string>& expressions);
// Evaluates every selector against the device, stopping at the first false or error.
cel::EvalResult matchSelectors(const SelectorSet& set, const CatalogDevice& device);

std::vector<std::string> textList(capnp::List<capnp::Text>::Reader list);

}  // namespace ledger::replay::dra
