// The life of a workload in the simulation: arrival, admission (quota per
// flavor, then devices on the flavor's nodes), pods and their generated
// ResourceClaims, running, finishing or eviction and requeueing, deletion.
#include <algorithm>
#include <cstdio>

#include "tools/generator/objects.h"
#include "tools/generator/sim_engine.h"

namespace ledger::gen {

namespace {

constexpr const char* kJobNames[] = {"train-resnet", "tune-bert", "llm-pretrain", "eval-vit",
                                     "infer-batch",  "rl-agent",  "sweep-lr",     "distill-t5"};
constexpr const char* kImages[] = {"nvcr.io/nvidia/pytorch:24.05-py3",
                                   "nvcr.io/nvidia/tensorflow:24.05-tf2-py3",
                                   "ghcr.io/example/trainer:v1.14.2"};
constexpr double kEvictionChance = 0.06;
constexpr std::size_t kSchedulingWindow = 64;  // pending workloads considered per pass

FlavorUsage times(const FlavorUsage& u, std::int64_t n) {
  return {u.cpuMilli * n, u.memoryMi * n, u.gpus * n, u.gpuMemoryMi * n};
}

bool fits(const FlavorUsage& used, const FlavorUsage& add, const FlavorUsage& quota) {
  return used.cpuMilli + add.cpuMilli <= quota.cpuMilli &&
         used.memoryMi + add.memoryMi <= quota.memoryMi && used.gpus + add.gpus <= quota.gpus &&
         used.gpuMemoryMi + add.gpuMemoryMi <= quota.gpuMemoryMi;
}

}  // namespace

void SimEngine::emitWorkload(const Job& job, const char* type) {
  emit(type, workloadObject(job, queues_[static_cast<std::size_t>(job.queue)], nextRv(), now_));
}

void SimEngine::emitQueue(int queue) {
  emit("MODIFIED", clusterQueueObject(queues_[static_cast<std::size_t>(queue)], nextRv(), now_));
}

void SimEngine::arrive() {
  at(now_ + seconds(rng_.exponential(arrivalMeanSec_)), Act::kArrive, 0);
  // Users stop submitting to a saturated cluster: keeps the live set bounded.
  if (pending_.size() >= static_cast<std::size_t>(8 * o_.queues)) return;
  Job job;
  job.id = nextJob_++;
  job.queue = static_cast<int>(rng_.below(static_cast<std::uint64_t>(o_.queues)));
  const QueueState& q = queues_[static_cast<std::size_t>(job.queue)];
  const std::uint64_t shape = rng_.below(10);
  job.shape = shape < 4   ? JobShape::kOneGpu
              : shape < 6 ? JobShape::kTwoGpus
              : shape < 9 ? JobShape::kMig
                          : JobShape::kCpuOnly;
  const std::uint64_t pods = rng_.below(4);
  job.pods = pods < 2 ? 1 : pods == 2 ? 2 : 4;
  job.cpuMilli = rng_.between(2, 16) * 500;
  job.memoryMi = rng_.between(4, 64) * 1024;
  job.priority = rng_.chance(0.2) ? 100 : 0;
  while (job.pods > 1 && !fits(FlavorUsage{}, times(job.perPod(), job.pods), q.quota))
    job.pods /= 2;
  job.jobName = std::string(kJobNames[rng_.below(std::size(kJobNames))]) + "-" + rng_.suffix();
  job.jobUid = rng_.uuid();
  job.name = "job-" + job.jobName + "-" + rng_.suffix();
  job.uid = rng_.uuid();
  job.ns = q.ns;
  job.image = kImages[rng_.below(std::size(kImages))];
  job.createdNs = now_;
  ++queues_[static_cast<std::size_t>(job.queue)].pending;
  const std::uint64_t id = job.id;
  emitWorkload(jobs_.emplace(id, std::move(job)).first->second, "ADDED");
  pending_.push_back(id);
  schedule();
}

void SimEngine::schedule() {
  std::size_t considered = 0;
  for (auto it = pending_.begin(); it != pending_.end() && considered < kSchedulingWindow;
       ++considered) {
    Job& job = jobs_.at(*it);
    if (tryAdmit(job)) {
      it = pending_.erase(it);
      continue;
    }
    if (!job.inadmissibleSeen && job.evictions == 0) {
      job.inadmissibleSeen = true;  // Kueue reports why, once
      emitWorkload(job);
    }
    ++it;
  }
}

bool SimEngine::tryAdmit(Job& job) {
  QueueState& q = queues_[static_cast<std::size_t>(job.queue)];
  const FlavorUsage total = times(job.perPod(), job.pods);
  for (int f = 0; f < kFlavorCount; ++f) {
    if (!fits(q.reserved[static_cast<std::size_t>(f)], total, q.quota)) continue;
    if (!place(job, f)) continue;
    job.flavor = f;
    job.phase = JobPhase::kAdmitted;
    job.reservedNs = now_;
    chargeQueue(job, +1);
    --q.pending;
    ++q.reserving;
    ++q.admitted;
    emitWorkload(job);
    emitQueue(job.queue);
    at(now_ + seconds(static_cast<double>(rng_.between(1, 3))), Act::kStartPods, job.id, job.epoch);
    return true;
  }
  return false;
}

// Devices for every pod on nodes of the flavor, or none (rolled back).
bool SimEngine::place(Job& job, int flavor) {
  job.runs.assign(static_cast<std::size_t>(job.pods), PodRun{});
  const std::size_t n = nodes_.size();
  const std::size_t start = rng_.below(n);
  for (PodRun& run : job.runs) {
    for (std::size_t k = 0; k < n && run.node < 0; ++k) {
      const std::size_t i = (start + k) % n;
      NodeState& node = nodes_[i];
      if (node.flavor != flavor) continue;
      if (job.shape == JobShape::kCpuOnly) {
        run.node = static_cast<int>(i);
      } else if (job.shape == JobShape::kMig) {
        for (int g = 0; g < kGpusPerNode && run.node < 0; ++g) {
          Gpu& gpu = node.gpus[static_cast<std::size_t>(g)];
          if (gpu.whole || gpu.mig == (1u << kMigPerGpu) - 1) continue;
          int s = 0;
          while (gpu.mig & (1u << s)) ++s;
          gpu.mig = static_cast<std::uint8_t>(gpu.mig | (1u << s));
          run.slots.push_back(Slot{g, s});
          run.node = static_cast<int>(i);
        }
      } else {
        const int need = job.devicesPerPod();
        int free = 0;
        for (const Gpu& g : node.gpus) free += g.free() ? 1 : 0;
        if (free < need) continue;
        for (int g = 0; g < kGpusPerNode && static_cast<int>(run.slots.size()) < need; ++g) {
          if (!node.gpus[static_cast<std::size_t>(g)].free()) continue;
          node.gpus[static_cast<std::size_t>(g)].whole = true;
          run.slots.push_back(Slot{g, -1});
        }
        run.node = static_cast<int>(i);
      }
    }
    if (run.node < 0) {
      releaseDevices(job);
      job.runs.clear();
      return false;
    }
  }
  return true;
}

void SimEngine::releaseDevices(Job& job) {
  for (PodRun& run : job.runs) {
    if (run.node < 0) continue;
    NodeState& node = nodes_[static_cast<std::size_t>(run.node)];
    for (const Slot& s : run.slots) {
      Gpu& gpu = node.gpus[static_cast<std::size_t>(s.gpu)];
      if (s.mig < 0) {
        gpu.whole = false;
      } else {
        gpu.mig = static_cast<std::uint8_t>(gpu.mig & ~(1u << s.mig));
      }
    }
    run.slots.clear();
  }
}

void SimEngine::chargeQueue(const Job& job, int sign) {
  const FlavorUsage total = times(job.perPod(), job.pods * sign);
  FlavorUsage& r =
      queues_[static_cast<std::size_t>(job.queue)].reserved[static_cast<std::size_t>(job.flavor)];
  r.cpuMilli += total.cpuMilli;
  r.memoryMi += total.memoryMi;
  r.gpus += total.gpus;
  r.gpuMemoryMi += total.gpuMemoryMi;
}

void SimEngine::startPods(Job& job) {
  char ip[32];
  for (std::size_t i = 0; i < job.runs.size(); ++i) {
    PodRun& run = job.runs[i];
    run.name = job.jobName + "-" + std::to_string(i) + "-" + rng_.suffix();
    run.uid = rng_.uuid();
    run.createdNs = now_;
    run.startedNs = now_;
    const std::uint64_t host = nextPodIp_++;
    std::snprintf(ip, sizeof ip, "10.%d.%d.%d", 128 + run.node / 256, run.node % 256,
                  static_cast<int>(host % 250 + 2));
    run.ip = ip;
    const NodeState& node = nodes_[static_cast<std::size_t>(run.node)];
    emit("ADDED", podObject(job, run, static_cast<int>(i), node, "Pending", nextRv(), now_));
    if (job.shape == JobShape::kCpuOnly) continue;
    run.claimName = run.name + "-gpu-" + rng_.suffix();
    run.claimUid = rng_.uuid();
    emit("ADDED", resourceClaimObject(job, run, node, false, nextRv(), now_));
    emit("MODIFIED", resourceClaimObject(job, run, node, true, nextRv(), now_));
  }
  at(now_ + seconds(static_cast<double>(rng_.between(5, 40))), Act::kPodsRunning, job.id,
     job.epoch);
}

void SimEngine::podsRunning(Job& job) {
  for (std::size_t i = 0; i < job.runs.size(); ++i) {
    PodRun& run = job.runs[i];
    run.startedNs = now_;
    emit("MODIFIED",
         podObject(job, run, static_cast<int>(i), nodes_[static_cast<std::size_t>(run.node)],
                   "Running", nextRv(), now_));
  }
  job.phase = JobPhase::kRunning;
  job.podsReadyNs = now_;
  emitWorkload(job);
  const double run = std::max(120.0, rng_.exponential(kMeanRunSec));
  if (rng_.chance(kEvictionChance)) {
    at(now_ + seconds(run * rng_.unit()), Act::kEvict, job.id, job.epoch);
  } else {
    at(now_ + seconds(run), Act::kFinish, job.id, job.epoch);
  }
}

void SimEngine::finish(Job& job) {
  job.phase = JobPhase::kFinished;
  job.finishedNs = now_;
  emitWorkload(job);
  for (std::size_t i = 0; i < job.runs.size(); ++i) {
    const PodRun& run = job.runs[i];
    const NodeState& node = nodes_[static_cast<std::size_t>(run.node)];
    emit("MODIFIED", podObject(job, run, static_cast<int>(i), node, "Succeeded", nextRv(), now_));
    if (job.shape != JobShape::kCpuOnly) {
      emit("DELETED", resourceClaimObject(job, run, node, true, nextRv(), now_));
    }
  }
  releaseDevices(job);
  chargeQueue(job, -1);
  QueueState& q = queues_[static_cast<std::size_t>(job.queue)];
  --q.reserving;
  --q.admitted;
  emitQueue(job.queue);
  at(now_ + seconds(static_cast<double>(rng_.between(60, 600))), Act::kCleanup, job.id, job.epoch);
  schedule();
}

void SimEngine::evict(Job& job) {
  for (std::size_t i = 0; i < job.runs.size(); ++i) {
    const PodRun& run = job.runs[i];
    const NodeState& node = nodes_[static_cast<std::size_t>(run.node)];
    emit("MODIFIED", podObject(job, run, static_cast<int>(i), node, "Failed", nextRv(), now_));
    if (job.shape != JobShape::kCpuOnly) {
      emit("DELETED", resourceClaimObject(job, run, node, true, nextRv(), now_));
    }
    emit("DELETED", podObject(job, run, static_cast<int>(i), node, "Failed", nextRv(), now_));
  }
  releaseDevices(job);
  chargeQueue(job, -1);
  QueueState& q = queues_[static_cast<std::size_t>(job.queue)];
  --q.reserving;
  --q.admitted;
  ++q.pending;
  job.runs.clear();
  job.phase = JobPhase::kPending;
  job.flavor = -1;
  job.evictedNs = now_;
  ++job.evictions;
  ++job.epoch;
  emitWorkload(job);
  emitQueue(job.queue);
  pending_.push_back(job.id);
  schedule();
}

void SimEngine::cleanup(Job& job) {
  for (std::size_t i = 0; i < job.runs.size(); ++i) {
    const PodRun& run = job.runs[i];
    emit("DELETED",
         podObject(job, run, static_cast<int>(i), nodes_[static_cast<std::size_t>(run.node)],
                   "Succeeded", nextRv(), now_));
  }
  emitWorkload(job, "DELETED");
  jobs_.erase(job.id);
}

}  // namespace ledger::gen
