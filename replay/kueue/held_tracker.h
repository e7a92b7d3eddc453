// What the pods hold through allocated ResourceClaims, followed record by
// record for the usage report's held integral (docs/reference.md, "Held
// against charged").
//
// A claim holds from the record where its allocation is reserved for a live
// pod until it is deallocated or deleted, or its pod is terminal (Succeeded,
// Failed) or deleted: the kubelet releases a pod's devices when the pod ends,
// and the DRA controller deallocates the claim after. What it holds is
// measured as the state audit measures it (replay/kueue/dra/held_amount.h),
// with the mapping and DeviceClasses in force, and the ResourceSlices
// published when the claim's record came (a device's counters do not change
// under an allocation). A claim is attributed as the audit attributes it: to its pod
// (ownerReferences, status.reservedFor, or a pod's resourceClaimStatuses),
// then to the Workload that owns the claim or the pod (by uid, directly or
// through the Job both point to). A pod of no Workload holds for its
// namespace: devices used outside Kueue.
//
// Each record costs the claims it can change, not all of them; a change of
// the mapping or a DeviceClass measures every allocated claim again.
//
// Single-threaded. Throws kj::Exception for a record that does not decode.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "replay/fold/cluster_state.h"
#include "replay/kueue/held_source.h"
#include "replay/kueue/resources.h"

namespace ledger::replay {

class HeldTracker final : public HeldSource {
 public:
  // Starts from `state`, the fold at the period's start; keeps it, folding
  // into it the records applyRecord gives (not the Workloads').
  explicit HeldTracker(ClusterState state);
  ~HeldTracker();
  HeldTracker(const HeldTracker&) = delete;
  HeldTracker& operator=(const HeldTracker&) = delete;

  // A record of any kind but Workload (those go to setWorkload).
  void applyRecord(std::uint64_t seq, kj::ArrayPtr<const capnp::word> words,
                   schema::ProjectedRecord::Reader r);
  // A Workload's uids, its own and its ownerReferences' (empty: deleted).
  void setWorkload(const std::string& key, std::vector<std::string> uids);

  const ResourceList& heldBy(const HeldTarget& target) const override;
  std::set<HeldTarget> takeChanged() override;
  std::vector<HeldTarget> holders() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The uids a Workload is known by: its own and its ownerReferences'.
std::vector<std::string> workloadUids(std::string_view uid, schema::Projection::Reader p);

}  // namespace ledger::replay
