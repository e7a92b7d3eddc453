#include "ingest/kube/late_events.h"

#include <algorithm>

#include "ingest/object_time.h"

namespace ledger::kube {

bool LateEvents::holdIfLate(WatchMessage& m, Clock::time_point now) {
  if (m.type != WatchMessage::Type::kEvent) return false;
  const auto type = m.event.type;
  if (type == ingest::WatchEventType::kBookmark || type == ingest::WatchEventType::kError) {
    return false;
  }
  // Late only when the object dates its change before this watch was
  // opened: a change made while it is open writes a newer time (the
  // server stamps the writer's managedFields entry), so a live event is
  // never taken for a late one by an old timestamp it still carries.
  const auto own = ingest::objectChangeTime(m.event.object, type);
  if (!own || *own >= m.receivedNs - ingest::kLateEventNs ||
      *own >= m.watchSinceNs - ingest::kLateEventNs) {
    return false;
  }
  std::int64_t& last = lastByResource_[m.resource->id];
  const std::int64_t t = std::max(*own, last);
  last = t;
  held_.push_back(Held{std::move(m), t});
  if (!deadline_) deadline_ = now + hold_;
  return true;
}

std::vector<LateEvents::Held> LateEvents::take() {
  std::vector<Held> out;
  out.swap(held_);
  std::stable_sort(out.begin(), out.end(),
                   [](const Held& a, const Held& b) { return a.timeNs < b.timeNs; });
  deadline_.reset();
  return out;
}

}  // namespace ledger::kube
