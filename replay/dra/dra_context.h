// What the DRA charging rules read: the folded objects, the mapping in force,
// the device catalog and a cache of compiled CEL selectors.
//
// Borrowed references; all must outlive the context. Not thread-safe (the
// selector cache is mutable).
#pragma once

#include <string>
#include <vector>

#include "cluster_state.h"
#include "device_catalog.h"
#include "device_selector.h"
#include "resource_mapper.h"

namespace ledger::replay::dra {

struct DraContext {
  const ClusterState& state;
  const ResourceMapper& mapper;
  const DeviceCatalog& catalog;
  cel::SelectorCache& selectors;
};

// A list of CEL expressions compiled together (all must hold: AND).
struct SelectorSet {
  std::vector<const cel::DeviceSelector*> compiled;
  std::vector<std::string> expressions;
  int failedIndex = -1;  // first expression that does not compile
  std::string compileError;
  bool ok() const { return failedIndex < 0; }
};

SelectorSet compileSelectors(cel::SelectorCache& cache,
                             const std::vector<std::string>& expressions);
// Evaluates every selector against the device, stopping at the first false or error.
cel::EvalResult matchSelectors(const SelectorSet& set, const CatalogDevice& device);

std::vector<std::string> textList(capnp::List<capnp::Text>::Reader list);

}  // namespace ledger::replay::dra
