// Follows workloads' waits for admission record by record, for a pass over
// the log (workload_waits.h) and for a consumer that keeps following the
// writer (the --watch daemon's ledger_admission_wait_time_seconds): each
// admission is handed out once, with its group and its wait, as its record
// passes, and the workloads pending now are counted on demand.
//
// The wait rule is workload_waits.h's: the admission's time minus the time
// the workload was queued (Kueue's pkg/workload QueuedWaitTime, the
// creationTimestamp or the Requeued condition's lastTransitionTime, with a
// lost quota reservation as a requeue).
//
// Its state saves to and restores from a schema::WaitState (schema/waits.capnp),
// the stored snapshots of replay/kueue/wait_rollups.h: a follower restored
// from the state after record N and fed the records after N is, in every
// answer, the one that read every record.
//
// Value type; not thread-safe (one caller feeds it). Memory: one entry per
// live Workload and LocalQueue; a deletion drops it. restore() lets the
// kj::Exception of a state that does not decode through (its callers,
// wait_store.h, turn it into a ReplayError).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>

#include "replay/kueue/workload_usage.h"
#include "replay/kueue/workload_waits.h"
#include "schema/projection.capnp.h"
#include "schema/waits.capnp.h"

namespace ledger::replay {

// One admission as the follower hands it out: every grouping's key at the
// record that admitted it, so one stored sample serves each grouping.
struct WaitSample {
  std::string clusterQueue;  // status.admission's, else the LocalQueue's; may be empty
  std::string ns;
  std::string localQueue;  // spec.queueName
  std::int64_t waitNs = 0;
  std::int64_t atNs = 0;  // the admission record's time
};
// The sample's group under `by` (WaitGroup::key).
std::string waitGroupOf(const WaitSample& s, WaitGrouping by);

class WaitFollower {
 public:
  explicit WaitFollower(WaitGrouping by) : by_(by) {}

  // Called for each admission (Admitted turning True on a workload the
  // ledger saw before it was admitted): its group, its wait (never
  // negative) and the admission record's time.
  using OnAdmission =
      std::function<void(const std::string& group, std::int64_t waitNs, std::int64_t atNs)>;
  // The next record, in seq order.
  void record(schema::ProjectedRecord::Reader r, const OnAdmission& onAdmission);
  // The same, each admission as a sample.
  using OnSample = std::function<void(const WaitSample&)>;
  void follow(schema::ProjectedRecord::Reader r, const OnSample& onSample);
  // The workloads neither admitted nor finished after the last record, by
  // group (a group with none is absent).
  std::map<std::string, std::uint64_t> pendingByGroup() const;

  // The state, workloads and LocalQueues in key order (equal states save
  // equal bytes), and back; restore() replaces the state, keeps the grouping.
  void save(schema::WaitState::Builder out) const;
  void restore(schema::WaitState::Reader in);

 private:
  struct Followed {
    std::string uid;
    std::int64_t creationNs = 0;
    std::int64_t requeuedNs = 0;  // the latest Requeued condition's lastTransitionTime
    std::int64_t lostNs = 0;      // the last record at which it lost its reservation
    WorkloadConditions conditions;
    std::string localQueue;    // spec.queueName
    std::string clusterQueue;  // status.admission.clusterQueue
    std::int64_t queuedNs() const;
  };
  void workload(std::string key, schema::ProjectedRecord::Reader r, const OnSample& onSample);
  std::string clusterQueueOf(const std::string& ns, const Followed& w) const;
  std::string groupOf(const std::string& key, const Followed& w) const;

  WaitGrouping by_;
  std::unordered_map<std::string, Followed> workloads_;       // ns/name
  std::unordered_map<std::string, std::string> localQueues_;  // ns/name -> ClusterQueue
};

// The report of the admissions gathered in `groups` (moved from), each
// group's waits sorted, with `atEnd`'s pending workloads at the period's end.
WaitsReport waitsReportOf(std::int64_t fromNs, std::int64_t toNs, WaitGrouping by,
                          std::map<std::string, WaitGroup>& groups, const WaitFollower& atEnd);

}  // namespace ledger::replay
