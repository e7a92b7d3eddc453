// The bookkeeping of one consistent snapshot of the cluster, as the daemon's
// writer assembles it from the LISTs of its watched resources (docs/
// reference.md "Observation").
//
// Kubernetes gives no consistent read across resources: each LIST is its own
// snapshot at its own resourceVersion, and they come back in any order and
// after any delay. A Workload judged "as of its reservation" on a state that
// does not yet hold the configuration, DeviceClasses and templates of the
// same moment loses its DRA charge (Kueue's pkg/dra reads the template and
// the mapping when it computes the charge). So while a snapshot is open, the
// Workloads' messages wait (`defers`) until every other resource the
// snapshot expects has ended its LIST, is served by no API (absent) or
// resumed its watch without listing; then they are recorded in their order.
// The snapshot closes once every LIST it began has ended. `wait` bounds the
// wait for LISTs that never begin or never end: after it the Workloads go
// ahead and the resources still outstanding are named `missing` in the
// closing record.
//
// The chain carries the bracket: a Snapshot object (schema/observation.h)
// ADDED before the first item, MODIFIED after the last, with each resource's
// resourceVersion and counts, and the gaps: for a resource the ledger watched
// before, the interval from the last moment it was known current to the
// relist.
//
// Value type, writer thread only; never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ledger::kube {

struct WatchMessage;

class SnapshotTracker {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SnapshotTracker(std::chrono::milliseconds wait) : wait_(wait) {}

  // The resources the next snapshot waits for (every watched one at start;
  // each resumes its watch, lists, or turns out absent), from `now` for at
  // most the tracker's wait.
  void expect(const std::set<std::string>& ids, Clock::time_point now);
  // The resource resumed its watch without a LIST, or is not served.
  void settled(const std::string& id);

  bool open() const { return open_.has_value(); }
  // Opens a snapshot when none is open; returns its ADDED object, or nullopt
  // when one was already open. `id` joins it either way.
  std::optional<nlohmann::json> begin(const std::string& id, std::int64_t nowNs,
                                      std::uint64_t firstSeq, Clock::time_point now);
  // The first seq of the open snapshot's items (after its ADDED record).
  void setFirstSeq(std::uint64_t seq);
  // The gap of a resource that lists again: from when it was last known
  // current to `toNs`.
  void noteGap(const std::string& id, std::int64_t fromNs, std::int64_t toNs, std::string reason);
  std::optional<std::int64_t> gapFrom(const std::string& id) const;
  void ended(const std::string& id, const std::string& resourceVersion, std::uint64_t objects,
             std::uint64_t deleted);

  // Whether a message of a Workloads resource must wait now.
  bool defers(const std::string& id, Clock::time_point now) const;
  void defer(WatchMessage message);
  // The deferred messages, once nothing holds them any longer (the caller
  // records them in order); empty otherwise.
  std::deque<WatchMessage> releasable(Clock::time_point now);
  // Every deferred message, whatever still holds them (a stop).
  std::deque<WatchMessage> releaseAll();
  // With no snapshot open: past the wait, stops expecting LISTs.
  void expire(Clock::time_point now);
  // The MODIFIED object that closes the snapshot, when every LIST it began
  // has ended (and it no longer defers), or at once when `force` (a stop:
  // the LISTs still outstanding are named missing); the tracker is then idle.
  std::optional<nlohmann::json> closing(std::uint64_t lastSeq, std::int64_t nowNs,
                                        Clock::time_point now, bool force);
  // Whether closing() would close the snapshot now (the caller commits what
  // it holds first, and only then: a LIST's items are committed in batches).
  bool canClose(Clock::time_point now, bool force) const;
  // When the tracker stops waiting for outstanding LISTs (nullopt: it waits
  // for none).
  std::optional<Clock::time_point> deadline() const;

 private:
  struct Listed {
    std::string resourceVersion;
    std::uint64_t objects = 0;
    std::uint64_t deleted = 0;
  };
  struct Gap {
    std::int64_t fromNs = 0;
    std::int64_t toNs = 0;
    std::string reason;
  };
  struct Open {
    std::string name;
    std::uint64_t firstSeq = 0;
    std::int64_t startedNs = 0;
    std::string reason;
    std::set<std::string> listing;  // began, not ended
    std::map<std::string, Listed> listed;
    std::map<std::string, Gap> gaps;
  };
  // Some resource other than the Workloads is expected or still listing.
  bool othersOutstanding() const;
  static bool isWorkloads(const std::string& id);

  std::chrono::milliseconds wait_;
  std::set<std::string> expected_;  // not yet begun, resumed or absent
  std::optional<Clock::time_point> waitUntil_;
  std::optional<Open> open_;
  std::deque<WatchMessage> deferred_;
};

}  // namespace ledger::kube
