// Builders of the simulated Kubernetes objects, shaped as the API server
// sends them in watch events (including metadata.managedFields), 2-10 KB
// each: Namespaces, Pods, the Kueue objects and the resource.k8s.io DRA
// objects. Internal to tools/generator.
//
// Builders of objects emitted many times return printed JSON and memoise
// their constant parts in the state's `mutable` caches (so a Job, PodRun or
// QueueState must not change those parts after its first event).
// Otherwise each builder is a pure function of the simulation state it is handed and
// `rv`, the resourceVersion the API server assigned to this write; `nowNs`
// is the time of the write (managedFields times, condition transitions).
// Thread-safe; throws only std::bad_alloc.
#pragma once

#include <string>

#include "tools/generator/k8s_json.h"
#include "tools/generator/sim_model.h"

namespace ledger::gen {

// ---- core/v1 (objects_core.cpp)
J namespaceObject(const QueueState& q, const std::string& rv);
// The pod template both the Workload's pod set and its Pods carry.
J podTemplateSpec(const Job& job);
// phase: Pending (bound, containers starting), Running, Succeeded or Failed.
std::string podObject(const Job& job, const PodRun& run, int index, const NodeState& node,
                      const char* phase, const std::string& rv, std::int64_t nowNs);

// ---- kueue.x-k8s.io and the DRA quota configuration (objects_kueue.cpp)
J kueueConfigObject(const std::string& uid, std::int64_t createdNs, const std::string& rv);
J resourceFlavorObject(int flavor, const std::string& uid, std::int64_t createdNs,
                       const std::string& rv);
std::string clusterQueueObject(const QueueState& q, const std::string& rv, std::int64_t nowNs);
J localQueueObject(const QueueState& q, const std::string& rv);
std::string workloadObject(const Job& job, const QueueState& q, const std::string& rv,
                           std::int64_t nowNs);

// ---- resource.k8s.io/v1 (objects_dra.cpp)
J deviceClassObject(const char* name, const char* deviceType, const std::string& uid,
                    std::int64_t createdNs, const std::string& rv);
J claimTemplateObject(const QueueState& q, const char* name, const char* deviceClass, int count,
                      const std::string& uid, const std::string& rv);
// The slice that publishes the node's shared counters (one counter set per GPU).
J counterSliceObject(const NodeState& node, const std::string& rv, std::int64_t nowNs);
// The slice that publishes GPU `gpu` of the node: the whole GPU and its MIG partitions.
J deviceSliceObject(const NodeState& node, int gpu, const std::string& rv, std::int64_t nowNs);
// A claim generated from the pod's template; allocated: with status.allocation.
J resourceClaimObject(const Job& job, const PodRun& run, const NodeState& node, bool allocated,
                      const std::string& rv, std::int64_t nowNs);

// Device names as published in the slices.
std::string gpuDeviceName(int gpu);
std::string migDeviceName(int gpu, int slot);

}  // namespace ledger::gen
