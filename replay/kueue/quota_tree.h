// ClusterQueues and Cohorts as Kueue's quota tree (pkg/cache/scheduler
// resource_node.go): per (flavor, resource), a node's subtree quota, the part
// it keeps for itself (lendingLimit), its usage as seen by its parent, what
// it can still take (available) and the most it could ever take
// (potentialAvailable, bounded by borrowingLimit). Hierarchical cohorts are
// followed through Cohort objects' parents; a cohort named by a queue but
// never defined is an empty cohort, as in Kueue.
//
// Built from a ClusterState plus the reserved usage per ClusterQueue. A
// cohort's subtree quota and usage are sums over its children, asked for
// every ClusterQueue below it: each is computed once per (flavor, resource)
// and kept, so a report over one cohort of thousands of queues costs a pass
// per queue, not one over the whole cohort per queue (docs/performance.md,
// "The state report").
// Not thread-safe, const members included (they fill those sums). The
// constructor never throws (a parent cycle is cut where it closes); the
// sums throw std::overflow_error past Quantity's range, and are not kept
// then.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "replay/fold/cluster_state.h"
#include "schema/k8s/quantity.h"

namespace ledger::replay {

using FlavorResource = std::pair<std::string, std::string>;  // (flavor, resource)

struct ResourceLimits {
  Quantity nominal;
  std::optional<Quantity> borrowingLimit;
  std::optional<Quantity> lendingLimit;
};

// An optional quota field as the projection keeps it (borrowingLimit,
// lendingLimit): nullopt when unset ("") or not a quantity.
std::optional<Quantity> optionalQuantity(const capnp::Text::Reader& text);

class QuotaTree {
 public:
  using Usage = std::map<std::string, std::map<FlavorResource, Quantity>>;  // by ClusterQueue

  QuotaTree(const ClusterState& state, const Usage& clusterQueueUsage);

  bool hasClusterQueue(const std::string& name) const;
  // Parent cohort of a queue or cohort ("" at the root).
  std::string parentOf(const std::string& node, bool isCohort) const;
  const ResourceLimits* limits(const std::string& node, bool isCohort,
                               const FlavorResource& fr) const;

  Quantity subtreeQuota(const std::string& node, bool isCohort, const FlavorResource& fr) const;
  Quantity localQuota(const std::string& node, bool isCohort, const FlavorResource& fr) const;
  Quantity usage(const std::string& node, bool isCohort, const FlavorResource& fr) const;
  // What a ClusterQueue can still take now, borrowing included (>= 0).
  Quantity available(const std::string& clusterQueue, const FlavorResource& fr) const;
  // The most a ClusterQueue could hold if nobody else used anything.
  Quantity potentialAvailable(const std::string& clusterQueue, const FlavorResource& fr) const;
  // Cohorts with no parent, sorted.
  std::vector<std::string> rootCohorts() const;
  // Children (queues and cohorts) of a cohort.
  std::vector<std::pair<std::string, bool>> children(const std::string& cohort) const;

 private:
  struct Node {
    std::string parent;  // cohort name, "" at root
    std::map<FlavorResource, ResourceLimits> limits;
    std::vector<std::pair<std::string, bool>> children;  // (name, isCohort)
    // A cohort's sums over its children, as computed (see above).
    mutable std::map<FlavorResource, Quantity> keptSubtreeQuota, keptUsage;
  };
  const Node* node(const std::string& name, bool isCohort) const;
  Quantity availableAt(const std::string& name, bool isCohort, const FlavorResource& fr) const;
  Quantity potentialAt(const std::string& name, bool isCohort, const FlavorResource& fr) const;

  std::map<std::string, Node> queues_;
  std::map<std::string, Node> cohorts_;
  Usage usage_;
};

}  // namespace ledger::replay
