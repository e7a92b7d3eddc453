// Plain-words explanations of a quota check (flavor_assigner.h QuotaCheck):
// how much is short, what the ClusterQueue itself has, and why its cohort
// cannot lend more - naming the borrowingLimit and the other queues'
// lendingLimit and usage that cap it, hierarchical cohorts included, e.g.
//   "cluster-queue team-a needs 1 more nvidia.com/gpu in flavor default-flavor
//    (requests 2; nominal quota 4, 3 in use); its cohort can lend 0 because
//    team-b's lendingLimit is 0"
//
// Pure functions of the quota view; thread-compatible; never throw.
#pragma once

#include <set>
#include <string>

#include "replay/admission/flavor_assigner.h"

namespace ledger::replay::admission {

std::string explainShortfall(const QuotaView& quota, const std::string& clusterQueue,
                             const QuotaCheck& check, const std::set<std::string>& binary);

// What this request adds beyond the ClusterQueue's nominal quota (>= 0).
Int128 borrowedAmount(const QuotaView& quota, const std::string& clusterQueue,
                      const QuotaCheck& check);

}  // namespace ledger::replay::admission
