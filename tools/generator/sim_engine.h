// The discrete-event engine behind ClusterSim: a clock, a queue of timed
// actions and the cluster state, turning each action into watch events.
// Internal to tools/generator (cluster_sim.cpp: setup and the event loop;
// sim_lifecycle.cpp: admission, pods, finishing, eviction, cleanup).
// Thread safety: none. Throws only std::bad_alloc.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "tools/generator/cluster_sim.h"
#include "tools/generator/k8s_json.h"
#include "tools/generator/sim_model.h"
#include "tools/generator/sim_rng.h"

namespace ledger::gen {

class SimEngine {
 public:
  explicit SimEngine(const SimOptions& options);

  // Runs actions until at least one event line is ready.
  void step();
  std::deque<std::string>& ready() { return ready_; }

 private:
  enum class Act : std::uint8_t {
    kArrive,
    kStartPods,
    kPodsRunning,
    kFinish,
    kEvict,
    kCleanup,
    kRepublish
  };
  struct Action {
    std::int64_t timeNs;
    std::uint64_t order;  // FIFO among equal times: determinism without relying on heap internals
    Act act;
    std::uint64_t target;  // job id, or node index for kRepublish
    std::uint32_t epoch;
    bool operator>(const Action& o) const {
      return timeNs != o.timeNs ? timeNs > o.timeNs : order > o.order;
    }
  };

  // cluster_sim.cpp
  void setup();
  void at(std::int64_t timeNs, Act act, std::uint64_t target, std::uint32_t epoch = 0);
  void emit(const char* type, const J& object) { emit(type, object.dump()); }
  void emit(const char* type, const std::string& objectJson);
  std::string nextRv() { return std::to_string(++rv_); }
  std::int64_t seconds(double s) const { return static_cast<std::int64_t>(s * 1e9); }
  void republish(int node);

  // sim_lifecycle.cpp
  void arrive();
  void schedule();
  bool tryAdmit(Job& job);
  bool place(Job& job, int flavor);
  void startPods(Job& job);
  void podsRunning(Job& job);
  void finish(Job& job);
  void evict(Job& job);
  void cleanup(Job& job);
  void releaseDevices(Job& job);
  void chargeQueue(const Job& job, int sign);
  void emitQueue(int queue);
  void emitWorkload(const Job& job, const char* type = "MODIFIED");

  SimOptions o_;
  SimRng rng_;
  std::int64_t now_ = 0;
  std::int64_t lastEventNs_ = 0;
  std::uint64_t rv_ = 100000;
  std::uint64_t order_ = 0;
  bool setUp_ = false;
  std::deque<std::string> ready_;
  std::priority_queue<Action, std::vector<Action>, std::greater<>> actions_;
  std::vector<NodeState> nodes_;
  std::vector<QueueState> queues_;
  std::map<std::uint64_t, Job> jobs_;
  std::deque<std::uint64_t> pending_;
  std::uint64_t nextJob_ = 1;
  std::uint64_t nextPodIp_ = 0;
  double arrivalMeanSec_ = 10;
};

}  // namespace ledger::gen
