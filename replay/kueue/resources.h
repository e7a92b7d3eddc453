// Resource lists and the pod request arithmetic Kubernetes and Kueue use.
//
// ResourceList is an ordered map (deterministic output) of exact quantities.
// podRequests mirrors k8s.io/component-helpers/resource PodRequests: regular
// containers summed, each init container maxed (restartable "sidecar" init
// containers add to the running total and to every later init container),
// pod overhead added. kueueValue mirrors Kueue's ResourceValue: cpu in
// milli-units, everything else in whole units rounded away from zero.
//
// Pure functions; thread-safe. Quantities that do not parse are not thrown:
// they are collected in `problems` so a bad object becomes a finding.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "schema/k8s/quantity.h"
#include "schema/projection.capnp.h"

namespace ledger::replay {

using ResourceList = std::map<std::string, Quantity, std::less<>>;

void addInto(ResourceList& into, const ResourceList& more);
void maxInto(ResourceList& into, const ResourceList& other);
ResourceList scaled(const ResourceList& list, std::int64_t factor);

// A KeyValue list of quantities; unparsable entries are named in `problems`.
ResourceList toResourceList(capnp::List<schema::KeyValue>::Reader list,
                            std::vector<std::string>* problems, const std::string& where);

// A container's requests with its limits filling in missing requests, as
// Kueue's AdjustResources does before computing totals.
ResourceList containerRequests(schema::Container::Reader c, std::vector<std::string>* problems);

// Per-pod requests of a pod spec (Kubernetes PodRequests, no pod-level resources).
ResourceList podRequests(schema::PodSpec::Reader spec, std::vector<std::string>* problems);

// Kueue's integer view of a quantity: milli-units for cpu, units otherwise,
// rounded away from zero (resource.Quantity MilliValue/Value).
Int128 kueueValue(const std::string& resource, const Quantity& q);

// Kubernetes' extended resource names: contain '/', not kubernetes.io/, not hugepages-.
bool isExtendedResourceName(std::string_view name);

}  // namespace ledger::replay
