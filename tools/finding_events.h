// `ledger-ingest --watch --emit-events`: one Kubernetes Event on a Workload
// for each audit finding about it that opens in the daemon's live state.
//
// What is one finding: a (Workload uid, finding type, message) open in a
// report. It stays the same finding, and gets no further event, for as long
// as every report built after it has it; once a report lacks it, it has
// closed, and its next appearance is a new finding with an event of its
// own. A finding whose message changes (other amounts, another device) is a
// new finding. Findings about other objects (ClusterQueue, Cohort, pool,
// device: QuotaExceeded, StatusMismatch, CounterOvercommitted,
// DeviceDoubleAllocated) get no event: an Event has one involved object, and
// they have no Workload to name.
//
// An Event's name is "<workload name>.<16 hex of SHA-256(uid, type, message,
// n)>", n counting how often this process has seen that finding open
// before. A restarted daemon finds the findings open in the restored state
// as new and posts them again under the same names (n = 0): the API server
// answers 409 AlreadyExists and no duplicate appears, as long as the Event
// has not expired (the API server's event TTL, 1 h by default). A finding
// that closed and reopened while the daemon was down, or that reopens after
// a restart, gets the name of its first opening and no new Event.
//
// Reports are built by LiveState (on a scrape or refresh()); a thread of
// this class calls refresh() every `interval` so that findings are seen
// without scrapes. Events go to the EventPoster's queue, never over the
// network from here: the writer thread is not held up by any of this.
//
// Ownership: borrows the LiveState and the EventPoster, which must outlive
// it. Thread safety: start()/stop() from one thread; the listener runs
// under LiveState's lock. Errors: never throws except std::bad_alloc; a
// finding whose Workload cannot be read is logged and skipped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "ingest/kube/event_poster.h"
#include "replay/fold/cluster_state.h"
#include "replay/kueue/report.h"
#include "tools/live_state.h"

namespace ledger::cli {

class FindingEvents {
 public:
  FindingEvents(LiveState& live, kube::EventPoster& poster,
                std::chrono::milliseconds interval = std::chrono::seconds(1));
  ~FindingEvents();
  FindingEvents(const FindingEvents&) = delete;
  FindingEvents& operator=(const FindingEvents&) = delete;

  void start();
  void stop();  // idempotent

  // What one report opens: queues an event for each Workload finding that
  // the previous report did not have.
  void onReport(const replay::ClusterState& state, const replay::StateReport& report);

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // uid, type, message

  LiveState& live_;
  kube::EventPoster& poster_;
  const std::chrono::milliseconds interval_;
  // Under LiveState's lock (onReport).
  std::set<Key> open_;
  std::map<Key, std::uint32_t> openings_;  // how often seen opening, while its Workload lives
  // The refresh thread.
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// The Event name for the `n`-th opening (from 0) of a finding.
std::string findingEventName(const std::string& workloadName, const std::string& uid,
                             const std::string& type, const std::string& message, std::uint32_t n);

}  // namespace ledger::cli
