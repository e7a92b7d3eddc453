// The cluster as a workload's reservation saw it: the DRA charge inputs
// (DeviceClasses, ResourceClaimTemplates, ResourceSlices and the mapping in
// effect) at the record where its quota was reserved.
//
// Kueue computes a workload's DRA charge before it reserves quota and never
// again (pkg/controller/core/workload_controller.go: handleDRA runs for
// pending workloads only), so `computed` is the charge on those inputs, and
// today's inputs give `current` and ChargeDrift. Most reservations saw what
// the state still holds: changedAfter() answers that from the fold's change
// seqs without building anything; a view of the inputs is built once per
// stretch of the log between two input changes that some reservation fell
// in (ClusterState::chargeInputsAt).
//
// Borrows the ClusterState, which must outlive this object and not change
// while it is used. Not thread-safe (caches). Never throws but what the
// state's readers throw for a damaged object (cluster_state.h, "Errors").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "replay/fold/cluster_state.h"
#include "replay/kueue/dra/dra_context.h"

namespace ledger::replay {

class ChargeAtReservation {
 public:
  explicit ChargeAtReservation(const ClusterState& state);
  ~ChargeAtReservation();
  ChargeAtReservation(const ChargeAtReservation&) = delete;
  ChargeAtReservation& operator=(const ChargeAtReservation&) = delete;

  // Whether anything the charge of `workload` (in `ns`) reads changed after
  // record `reservedSeq`: the mapping in effect, a DeviceClass, one of the
  // ResourceClaimTemplates its pod sets name, or - when the charge on
  // today's state consulted the published devices (`readDevices`) - a
  // ResourceSlice.
  bool changedAfter(std::uint64_t reservedSeq, const std::string& ns,
                    schema::Workload::Reader workload, bool readDevices);

  // A DRA context over the inputs as they were after `reservedSeq`, built
  // on first use and shared by every reservation that saw the same inputs.
  // The selector cache is shared (compiled CEL does not depend on the
  // state); valid as long as this object.
  dra::DraContext& contextAt(std::uint64_t reservedSeq, cel::SelectorCache& selectors);

  // What changed after `reservedSeq` among the inputs changedAfter() looks
  // at, for a ChargeDrift message: "ResourceClaimTemplate team-a/gpu deleted
  // at 2026-11-20T10:00:00Z (seq 12)", the mapping's new epoch, ...
  std::string describeChangesAfter(std::uint64_t reservedSeq, const std::string& ns,
                                   schema::Workload::Reader workload, bool readDevices) const;

 private:
  struct InputsView;
  // One change of a charge input after some seq, as describeChangesAfter
  // tells it.
  struct Change {
    std::uint64_t seq = 0;
    std::int64_t timeNs = 0;
    ObjectKind kind = ObjectKind::kCount;
    std::string key;
    const char* what = "";  // "created", "changed", "deleted"
  };
  void indexChanges();
  // Whether what a charge reads of the ResourceSlices differs between the
  // state after `seq` and now: a driver republishing the same devices under
  // a new generation changes nothing a charge sees.
  bool slicesChangedAfter(std::uint64_t seq);
  bool sameForCharges(const StoredObject& then, const StoredObject& now);
  std::vector<Change> changesAfter(std::uint64_t seq, ObjectKind kind) const;
  bool templateChangedAfter(const std::string& key, std::uint64_t seq) const;

  const ClusterState& state_;
  bool indexed_ = false;
  // Every seq at which some charge input changed, ascending: the inputs at
  // seq R are those after the last change at or before R.
  std::vector<std::uint64_t> changeSeqs_;
  // ResourceClaimTemplate key -> the last seq that created, changed or
  // deleted it.
  std::map<std::string, std::uint64_t, std::less<>> lastTemplateChange_;
  std::map<std::uint64_t, std::unique_ptr<InputsView>> views_;
  std::map<std::uint64_t, bool> slicesChanged_;
  std::map<const StoredObject*, bool> sameAsLive_;
};

// "ConfigMap kueue-system/kueue-manager-config", "Kueue cluster",
// "Configuration" for a DraConfig object's key (group/kind/namespace/name).
std::string describeConfigSource(std::string_view draConfigKey);

// The ResourceClaimTemplates a workload's pod sets name, as "namespace/name".
std::vector<std::string> referencedTemplates(const std::string& ns,
                                             schema::Workload::Reader workload);

}  // namespace ledger::replay
