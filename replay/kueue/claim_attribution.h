// Internal to replay/: which pod and Workload an allocated ResourceClaim
// serves, by uid: the claim's ownerReferences, then its status.reservedFor,
// then a pod's resourceClaimStatuses; the Workload owning the claim, else
// one owning the pod (directly or through the Job both point to). The pool
// audit (pool_audit.cpp) and the held amounts (held_audit.cpp) attribute
// claims alike, as the held integral does (held_tracker.h).
//
// Borrows the state and the workloads; not thread-safe; never throws
// except std::bad_alloc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "replay/kueue/audit.h"

namespace ledger::replay {

struct Attribution {
  const StoredObject* pod = nullptr;
  WorkloadAudit* workload = nullptr;
};

class Attributor {
 public:
  Attributor(const ClusterState& state, std::vector<WorkloadAudit>& wls) {
    for (const auto& [key, pod] : state.objects(ObjectKind::kPod)) {
      podsByUid_[std::string(pod->uid())] = pod.get();
      for (auto s : pod->projection().getBody().getPod().getResourceClaimStatuses()) {
        podByClaim_[ClusterState::key(pod->ns(), s.getResourceClaimName().cStr())] = pod.get();
      }
    }
    for (WorkloadAudit& w : wls) {
      byOwnerUid_[w.report.uid] = &w;
      for (const auto& uid : w.uids) byOwnerUid_.emplace(uid, &w);
    }
  }

  Attribution attribute(const StoredObject& claim) const {
    Attribution a;
    auto projection = claim.projection();
    for (auto o : projection.getOwnerReferences()) {
      const std::string_view uid = textView(o.getUid());
      if (auto it = podsByUid_.find(uid); it != podsByUid_.end()) a.pod = it->second;
      if (auto it = byOwnerUid_.find(uid); it != byOwnerUid_.end()) a.workload = it->second;
    }
    if (a.pod == nullptr) {
      for (auto c : projection.getBody().getResourceClaim().getReservedFor()) {
        if (auto it = podsByUid_.find(textView(c.getUid())); it != podsByUid_.end())
          a.pod = it->second;
      }
    }
    if (a.pod == nullptr) {
      auto it = podByClaim_.find(ClusterState::key(claim.ns(), claim.name()));
      if (it != podByClaim_.end()) a.pod = it->second;
    }
    if (a.workload == nullptr && a.pod != nullptr) {
      for (auto o : a.pod->projection().getOwnerReferences()) {
        auto it = byOwnerUid_.find(textView(o.getUid()));
        if (it != byOwnerUid_.end()) {
          a.workload = it->second;
          break;
        }
      }
    }
    return a;
  }

 private:
  // Transparent, so lookups by a capnp text's view allocate nothing.
  std::map<std::string, const StoredObject*, std::less<>> podsByUid_;
  std::map<std::string, const StoredObject*, std::less<>> podByClaim_;
  std::map<std::string, WorkloadAudit*, std::less<>> byOwnerUid_;
};

}  // namespace ledger::replay
