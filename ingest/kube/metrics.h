// The daemon's counters and gauges, and their Prometheus text exposition
// (format 0.0.4), named in Prometheus' conventions:
//
//   ledger_records_appended_total{kind}          counter  records committed
//   ledger_watch_events_total{resource,type}     counter  events received from the API
//   ledger_watch_rejected_total{resource}        counter  events and list items skipped as
//                                                          unrecordable (logged each)
//   ledger_watch_restarts_total{resource,reason} counter  watches re-established
//   ledger_relists_total{resource}               counter  LISTs after a watch could not resume
//   ledger_unobserved_seconds_total{resource}    counter  length of the gaps recorded (relists of
//                                                         a resource watched before)
//   ledger_observation_gaps_total{resource}      counter  gaps recorded
//   ledger_commits_total                         counter  batches committed
//   ledger_write_failures_total                  counter  commits the ledger refused for a
//                                                          full disk, each retry counted
//   ledger_writes_blocked                        gauge    1 while a commit waits for disk space
//   ledger_last_event_age_seconds{kind}          gauge    since the last event of that kind
//   ledger_ingest_lag_seconds                    gauge    age of the oldest received, uncommitted
//   event ledger_stored_bytes                          gauge    the ledger directory's size on disk
//   ledger_head_seq                              gauge    the ledger's last sequence number
//   ledger_watch_synced{resource}                gauge    1 once the resource's watch has synced
//   ledger_resource_absent{resource}             gauge    1 while its API is not served
//   ledger_events_emitted_total                  counter  Kubernetes Events posted (--emit-events),
//                                                          or found already posted (409)
//   ledger_events_failed_total                   counter  Events given up on (4xx, retries spent)
//   ledger_events_dropped_total                  counter  Events dropped: the poster's queue was
//   full
//
// Readiness: every resource has been discovered, and each one that is served
// has synced (absent ones do not hold readiness back; they are retried), and
// no commit is waiting for disk space.
//
// Thread safety: every member may be called from any thread (one mutex).
// Errors: never throws except std::bad_alloc.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ledger::kube {

enum class ResourceState { kUnknown, kAbsent, kSyncing, kSynced };

class Metrics {
 public:
  void registerResource(const std::string& id);
  void setState(const std::string& id, ResourceState state);
  ResourceState state(const std::string& id) const;
  bool ready() const;
  // "id: state" for each resource that holds readiness back.
  std::vector<std::string> notReady() const;

  void recordsAppended(const std::string& kind, std::uint64_t n);
  void watchEvent(const std::string& id, const std::string& type);
  void watchRejected(const std::string& id);
  void eventReceived(const std::string& kind, std::int64_t timeNs);
  void watchRestart(const std::string& id, const std::string& reason);
  void relist(const std::string& id);
  // A gap recorded for the resource, `ns` long.
  void unobserved(const std::string& id, std::int64_t ns);
  void committed(std::uint64_t headSeq);
  void setStoredBytes(std::uint64_t bytes);
  // Receipt time of the oldest event not yet committed; nullopt when none.
  void setOldestUncommitted(std::optional<std::int64_t> timeNs);
  // A commit the ledger refused for a full disk (each attempt).
  void writeFailed();
  // Why commits wait (readiness names it); nullopt once they go through.
  void setWritesBlocked(std::optional<std::string> reason);

  // Kubernetes Events (event_poster.h): each one counted once, by its end.
  void eventEmitted();
  void eventFailed();
  void eventDropped();

  std::uint64_t appended(const std::string& kind) const;
  std::uint64_t restarts(const std::string& id) const;  // all reasons
  std::uint64_t relists(const std::string& id) const;
  std::uint64_t rejected(const std::string& id) const;
  std::uint64_t headSeq() const;
  std::uint64_t writeFailures() const;
  bool writesBlocked() const;
  std::uint64_t eventsEmitted() const;
  std::uint64_t eventsFailed() const;
  std::uint64_t eventsDropped() const;

  std::string render(std::int64_t nowNs) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, ResourceState> states_;
  std::map<std::string, std::uint64_t> appended_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> events_;
  std::map<std::string, std::int64_t> lastEventNs_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> restarts_;
  std::map<std::string, std::uint64_t> relists_;
  std::map<std::string, std::pair<std::uint64_t, std::int64_t>> gaps_;  // count, ns
  std::map<std::string, std::uint64_t> rejected_;
  std::uint64_t commits_ = 0;
  std::uint64_t headSeq_ = 0;
  std::uint64_t storedBytes_ = 0;
  std::optional<std::int64_t> oldestUncommittedNs_;
  std::uint64_t writeFailures_ = 0;
  std::optional<std::string> writesBlocked_;
  std::uint64_t eventsEmitted_ = 0;
  std::uint64_t eventsFailed_ = 0;
  std::uint64_t eventsDropped_ = 0;
};

}  // namespace ledger::kube
