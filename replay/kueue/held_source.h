// Who holds devices through allocated ResourceClaims, and what: the view
// the usage integration reads (replay/kueue/usage_levels.h), followed from
// the records (replay/kueue/held_tracker.h) or read back from what the
// rollups' writer stored (replay/kueue/held_record.h). Both give the same
// holders, amounts and changes after each record.
//
// Interface only; implementations state their own threading and errors.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "replay/kueue/resources.h"

namespace ledger::replay {

// Who holds: a Workload (key "namespace/name"), or the pods of no Workload
// in a namespace (key the namespace).
struct HeldTarget {
  bool workload = true;
  std::string key;
  friend auto operator<=>(const HeldTarget&, const HeldTarget&) = default;
};

struct HeldTargetHash {
  std::size_t operator()(const HeldTarget& t) const {
    return std::hash<std::string>()(t.key) ^ static_cast<std::size_t>(t.workload);
  }
};

class HeldSource {
 public:
  virtual ~HeldSource() = default;
  // What `target` holds now, per quota resource (empty when nothing).
  virtual const ResourceList& heldBy(const HeldTarget& target) const = 0;
  // The targets whose holdings may have changed since the last call.
  virtual std::set<HeldTarget> takeChanged() = 0;
  // Every target holding something now, in order.
  virtual std::vector<HeldTarget> holders() const = 0;
};

}  // namespace ledger::replay
