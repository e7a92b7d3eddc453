// Late watch events put back in the order they happened.
//
// A watch resumed after the daemon was down delivers its backlog at once:
// stamped with the receipt time, a workload that finished at the outage's
// first minute would be charged until the restart. The object says when it
// changed (ingest/object_time.h); but the log's times never go backwards, so
// the backlogs of several resumed watches, received one resource after the
// other, must be recorded in the order of those times, not of arrival, or
// every late event after the first resource's would be raised to its times.
// So a late event is held for `hold` after the first one of a burst, then
// the held events are handed back sorted by their own time (stable: arrival
// order among equal times, and one resource's events never reordered, since
// each is raised to the previous one of its resource).
//
// Value type, writer thread only; never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ingest/kube/watch_message.h"

namespace ledger::kube {

class LateEvents {
 public:
  using Clock = std::chrono::steady_clock;
  struct Held {
    WatchMessage message;
    std::int64_t timeNs = 0;  // the object's own time, raised within its resource
  };

  explicit LateEvents(std::chrono::milliseconds hold) : hold_(hold) {}

  // Holds `m` when it is a late event: its object's change time is more than
  // ingest::kLateEventNs before its receipt and before the watch that
  // delivered it was opened (a backlog); false, and `m` untouched, otherwise.
  bool holdIfLate(WatchMessage& m, Clock::time_point now);
  bool empty() const { return held_.empty(); }
  std::size_t size() const { return held_.size(); }
  std::optional<Clock::time_point> deadline() const { return deadline_; }
  // Every held event, in time order; the holder is empty afterwards.
  std::vector<Held> take();

 private:
  std::chrono::milliseconds hold_;
  std::vector<Held> held_;
  std::optional<Clock::time_point> deadline_;
  std::map<std::string, std::int64_t> lastByResource_;
};

}  // namespace ledger::kube
