// The simulated cluster's state, shared by the simulation (cluster_sim.cpp,
// sim_lifecycle.cpp) and the object builders (objects_*.cpp). Internal to
// tools/generator. Everything is kept in vectors and ordered maps so that
// iteration order, and so every byte printed, depends only on the seed.
// Plain data owned by the SimEngine; no thread safety; nothing throws.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ledger::gen {

// The hardware: every node carries 8 A100-40GB GPUs, each published as a
// whole device and as 7 MIG 1g.5gb partitions that share the GPU's memory
// counter, so a GPU is used either whole or as partitions, never both.
inline constexpr int kGpusPerNode = 8;
inline constexpr int kMigPerGpu = 7;
inline constexpr std::int64_t kGpuMemoryMi = 40320;
inline constexpr std::int64_t kMigMemoryMi = 4864;
inline constexpr const char* kDriver = "gpu.nvidia.com";
inline constexpr const char* kGpuClass = "gpu.nvidia.com";
inline constexpr const char* kMigClass = "mig.nvidia.com";
inline constexpr const char* kKueueApi = "kueue.x-k8s.io/v1beta2";
inline constexpr const char* kResourceApi = "resource.k8s.io/v1";
inline constexpr const char* kFlavors[] = {"reserved", "spot"};
inline constexpr int kFlavorCount = 2;
// A workload's mean run time (exponential, at least two minutes): the
// lifecycle draws it, the cluster paces arrivals by it.
inline constexpr double kMeanRunSec = 2400;

struct Gpu {
  bool whole = false;    // allocated as a whole device
  std::uint8_t mig = 0;  // bit j: partition j allocated
  bool free() const { return !whole && mig == 0; }
};

struct NodeState {
  std::string name, uid, ip;
  int flavor = 0;
  std::int64_t generation = 1;
  std::int64_t createdNs = 0;
  std::vector<std::string> sliceUids;  // [0] the counters slice, [1+g] GPU g's devices
  std::array<Gpu, kGpusPerNode> gpus{};
};

// Quota and usage per flavor, in the units the ClusterQueue status prints.
struct FlavorUsage {
  std::int64_t cpuMilli = 0;
  std::int64_t memoryMi = 0;
  std::int64_t gpus = 0;
  std::int64_t gpuMemoryMi = 0;
};

struct QueueState {
  std::string name;  // ClusterQueue
  std::string ns;    // its namespace, holding the LocalQueue "user-queue"
  std::string cohort;
  std::string uid, lqUid, nsUid;
  std::int64_t createdNs = 0;
  FlavorUsage quota;  // nominal, the same for each flavor
  std::array<FlavorUsage, kFlavorCount> reserved{};
  int pending = 0, reserving = 0, admitted = 0;
  std::uint64_t statusGeneration = 1;
  // Printed once (objects_kueue.cpp): the spec and its manager's entry.
  mutable std::string specRaw, specEntryRaw;
};

enum class JobShape { kOneGpu, kTwoGpus, kMig, kCpuOnly };

// One device held by a pod's claim: GPU index and MIG slot (-1: whole GPU).
struct Slot {
  int gpu = 0;
  int mig = -1;
};

struct PodRun {
  std::string name, uid;
  std::string claimName, claimUid;
  int node = -1;
  std::vector<Slot> slots;
  std::string ip;
  std::int64_t createdNs = 0;
  std::int64_t startedNs = 0;
  // Printed once per pod (objects_core.cpp): the spec and its manager's entry.
  mutable std::string specRaw, specEntryRaw;
};

enum class JobPhase { kPending, kAdmitted, kRunning, kFinished };

struct Job {
  std::uint64_t id = 0;
  int queue = 0;
  JobShape shape = JobShape::kOneGpu;
  int pods = 1;
  std::int64_t cpuMilli = 1000;  // per pod
  std::int64_t memoryMi = 4096;  // per pod
  std::int32_t priority = 0;
  std::string ns, jobName, jobUid, name, uid, image;
  std::int64_t createdNs = 0;
  std::int64_t generation = 1;
  JobPhase phase = JobPhase::kPending;
  int flavor = -1;
  std::int64_t reservedNs = 0, podsReadyNs = 0, finishedNs = 0, evictedNs = 0;
  int evictions = 0;
  std::uint32_t epoch = 0;  // bumped on eviction: actions of an earlier run are stale
  bool inadmissibleSeen = false;
  std::vector<PodRun> runs;
  // Printed once per workload (objects_kueue.cpp): the spec and its manager's entry.
  mutable std::string specRaw, specEntryRaw;

  int devicesPerPod() const {
    return shape == JobShape::kTwoGpus ? 2 : shape == JobShape::kCpuOnly ? 0 : 1;
  }
  const char* claimTemplate() const {
    switch (shape) {
      case JobShape::kOneGpu:
        return "one-gpu";
      case JobShape::kTwoGpus:
        return "two-gpus";
      case JobShape::kMig:
        return "mig-1g5gb";
      case JobShape::kCpuOnly:
        return "";
    }
    return "";
  }
  // What Kueue charges per pod for the DRA devices (resource name, amount).
  FlavorUsage perPod() const {
    FlavorUsage u{cpuMilli, memoryMi, 0, 0};
    if (shape == JobShape::kOneGpu) u.gpus = 1;
    if (shape == JobShape::kTwoGpus) u.gpus = 2;
    if (shape == JobShape::kMig) u.gpuMemoryMi = kMigMemoryMi;
    return u;
  }
};

}  // namespace ledger::gen
