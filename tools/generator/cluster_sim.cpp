#include "tools/generator/cluster_sim.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "tools/generator/objects.h"
#include "tools/generator/sim_engine.h"

namespace ledger::gen {

namespace {

constexpr double kDay = 86400;
constexpr double kMeanRepublishSec = 2 * kDay;  // per node: driver restarts, upgrades
// Mean GPUs a workload holds (sim_lifecycle.cpp's mix: 40% one GPU, 20% two,
// 30% one MIG slice = 1/7 GPU, 10% CPU only; 1, 2 or 4 pods, mean 2).
constexpr double kMeanGpusPerJob = 2.0 * (0.4 * 1 + 0.2 * 2 + 0.3 / 7.0);
constexpr double kTargetLoad = 0.8;

}  // namespace

ClusterSim::ClusterSim(const SimOptions& options)
    : engine_(std::make_unique<SimEngine>(options)), limit_(options.events) {}

ClusterSim::~ClusterSim() = default;

bool ClusterSim::next(std::string* line) {
  if (produced_ >= limit_) return false;
  auto& ready = engine_->ready();
  while (ready.empty()) engine_->step();
  *line = std::move(ready.front());
  ready.pop_front();
  ++produced_;
  return true;
}

std::uint64_t ClusterSim::writeAll(std::ostream& out) {
  std::uint64_t bytes = 0;
  std::string line;
  while (next(&line)) {
    line.push_back('\n');
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
    bytes += line.size();
  }
  return bytes;
}

SimEngine::SimEngine(const SimOptions& options) : o_(options), rng_(options.seed) {
  if (o_.nodes < 1 || o_.queues < 1 || o_.cohortSize < 1) {
    throw std::invalid_argument("nodes, queues and cohort size must be at least 1");
  }
  const double totalGpus = static_cast<double>(o_.nodes) * kGpusPerNode;
  arrivalMeanSec_ = kMeanGpusPerJob * kMeanRunSec / (kTargetLoad * totalGpus);
}

void SimEngine::at(std::int64_t timeNs, Act act, std::uint64_t target, std::uint32_t epoch) {
  actions_.push(Action{timeNs, order_++, act, target, epoch});
}

void SimEngine::emit(const char* type, const std::string& objectJson) {
  // Watch events of one action are milliseconds apart; times never go back.
  lastEventNs_ = std::max(lastEventNs_, now_) + rng_.between(1, 40) * 1000000;
  std::string line = "{\"type\":\"";
  line += type;
  line += "\",\"object\":";
  line += objectJson;
  line += ",\"time\":\"";
  line += rfc3339(lastEventNs_, true);
  line += "\"}";
  ready_.push_back(std::move(line));
}

void SimEngine::setup() {
  now_ = o_.startNs;
  lastEventNs_ = now_;
  const std::int64_t bootNs = now_ - seconds(30 * kDay);
  char buf[64];
  std::array<int, kFlavorCount> flavorNodes{};
  for (int i = 0; i < o_.nodes; ++i) {
    NodeState n;
    std::snprintf(buf, sizeof buf, "gpu-node-%03d", i);
    n.name = buf;
    n.uid = rng_.uuid();
    std::snprintf(buf, sizeof buf, "10.0.%d.%d", i / 250, i % 250 + 1);
    n.ip = buf;
    n.flavor = i % kFlavorCount;
    n.createdNs = bootNs;
    for (int s = 0; s <= kGpusPerNode; ++s) n.sliceUids.push_back(rng_.uuid());
    ++flavorNodes[static_cast<std::size_t>(n.flavor)];
    nodes_.push_back(std::move(n));
  }
  // Quota: each flavor's GPUs shared evenly (at least enough for one of the
  // largest workloads), CPU and memory generous enough not to be the limit.
  const int perFlavorNodes = std::max(1, flavorNodes[0]);
  FlavorUsage quota;
  quota.gpus = std::max<std::int64_t>(8, perFlavorNodes * kGpusPerNode / o_.queues);
  quota.gpuMemoryMi = std::max<std::int64_t>(
      8 * kMigMemoryMi, perFlavorNodes * 2 * kGpusPerNode * kMigMemoryMi / o_.queues);
  quota.cpuMilli = std::max<std::int64_t>(64, perFlavorNodes * 96 * 2 / o_.queues) * 1000;
  quota.memoryMi = std::max<std::int64_t>(512, perFlavorNodes * 1024 * 2 / o_.queues) * 1024;
  for (int q = 0; q < o_.queues; ++q) {
    QueueState s;
    std::snprintf(buf, sizeof buf, "team-%02d", q);
    s.name = buf;
    s.ns = buf;
    std::snprintf(buf, sizeof buf, "cohort-%02d", q / o_.cohortSize);
    s.cohort = buf;
    s.uid = rng_.uuid();
    s.lqUid = rng_.uuid();
    s.nsUid = rng_.uuid();
    s.createdNs = bootNs + seconds(3600);
    s.quota = quota;
    queues_.push_back(std::move(s));
  }

  emit("ADDED", kueueConfigObject(rng_.uuid(), bootNs, nextRv()));
  emit("ADDED", deviceClassObject(kGpuClass, "gpu", rng_.uuid(), bootNs, nextRv()));
  emit("ADDED", deviceClassObject(kMigClass, "mig", rng_.uuid(), bootNs, nextRv()));
  for (int f = 0; f < kFlavorCount; ++f) {
    emit("ADDED", resourceFlavorObject(f, rng_.uuid(), bootNs, nextRv()));
  }
  for (const NodeState& n : nodes_) {
    emit("ADDED", counterSliceObject(n, nextRv(), bootNs));
    for (int g = 0; g < kGpusPerNode; ++g) emit("ADDED", deviceSliceObject(n, g, nextRv(), bootNs));
  }
  for (const QueueState& q : queues_) {
    emit("ADDED", namespaceObject(q, nextRv()));
    emit("ADDED", clusterQueueObject(q, nextRv(), q.createdNs));
    emit("ADDED", localQueueObject(q, nextRv()));
    emit("ADDED", claimTemplateObject(q, "one-gpu", kGpuClass, 1, rng_.uuid(), nextRv()));
    emit("ADDED", claimTemplateObject(q, "two-gpus", kGpuClass, 2, rng_.uuid(), nextRv()));
    emit("ADDED", claimTemplateObject(q, "mig-1g5gb", kMigClass, 1, rng_.uuid(), nextRv()));
  }
  at(now_ + seconds(rng_.exponential(arrivalMeanSec_)), Act::kArrive, 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    at(now_ + seconds(rng_.exponential(kMeanRepublishSec)), Act::kRepublish, i);
  }
}

void SimEngine::republish(int node) {
  NodeState& n = nodes_[static_cast<std::size_t>(node)];
  ++n.generation;
  emit("MODIFIED", counterSliceObject(n, nextRv(), now_));
  for (int g = 0; g < kGpusPerNode; ++g) emit("MODIFIED", deviceSliceObject(n, g, nextRv(), now_));
  at(now_ + seconds(rng_.exponential(kMeanRepublishSec)), Act::kRepublish,
     static_cast<std::uint64_t>(node));
}

void SimEngine::step() {
  if (!setUp_) {
    setUp_ = true;
    setup();
    return;
  }
  while (ready_.empty()) {
    const Action a = actions_.top();
    actions_.pop();
    now_ = a.timeNs;
    if (a.act == Act::kArrive) {
      arrive();
      continue;
    }
    if (a.act == Act::kRepublish) {
      republish(static_cast<int>(a.target));
      continue;
    }
    auto it = jobs_.find(a.target);
    if (it == jobs_.end() || it->second.epoch != a.epoch) continue;  // evicted meanwhile
    Job& job = it->second;
    switch (a.act) {
      case Act::kStartPods:
        startPods(job);
        break;
      case Act::kPodsRunning:
        podsRunning(job);
        break;
      case Act::kFinish:
        finish(job);
        break;
      case Act::kEvict:
        evict(job);
        break;
      case Act::kCleanup:
        cleanup(job);
        break;
      default:
        break;
    }
  }
}

}  // namespace ledger::gen
