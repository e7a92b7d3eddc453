// What the fold keeps, beside the live objects, so that a workload's charge
// can be computed on the cluster as it was when its quota was reserved.
//
// Kueue fixes a workload's charge when it reserves quota and never checks it
// again (pkg/controller/core/workload_controller.go runs handleDRA only for
// pending workloads): a DeviceClass deleted or a ResourceClaimTemplate
// re-created after admission changes nothing for a running workload. The
// audit therefore holds `recorded` against the charge of the state at the
// reservation. This class keeps:
//   - each workload's reservation: the seq of the record where its
//     QuotaReserved condition last became True;
//   - the configuration sources (the DraConfig objects Kueue reads) and the
//     epochs of the mapping in effect. Kueue reads its configuration when its
//     controller starts (cmd/kueue/main.go), so where the ledger has seen a
//     Kueue controller Pod, a changed mapping takes effect when such a Pod
//     next becomes Running; otherwise at the event that carries it;
//   - the seq of the last change of each kind of charge input.
// ClusterState keeps the versions of charge inputs that are no longer live
// (cluster_state.h, ObjectKind::kRetiredInput) and asks this class how long.
//
// Memory: one entry per reserved workload, per configuration source and per
// Kueue controller Pod, and the epochs since the oldest reservation.
// Value type; thread-compatible; never throws but for restore() (a
// std::runtime_error naming what does not decode).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/sha256.h"
#include "schema/checkpoint.capnp.h"

namespace ledger::replay {

// The kinds of object whose versions decide a workload's DRA charge, besides
// the mapping (which the epochs track).
enum class ChargeInput : std::uint8_t { kDeviceClass, kResourceClaimTemplate, kResourceSlice };
inline constexpr std::size_t kChargeInputKinds = 3;

// A stretch of the log during which one mapping is in effect.
struct ConfigEpoch {
  std::uint64_t fromSeq = 0;  // the record from which it is in effect
  std::int64_t fromNs = 0;
  std::uint64_t versionSeq = 0;  // the DraConfig version in effect; 0: no mapping
  std::int64_t versionNs = 0;
  std::string sourceKey;  // that DraConfig object's key (identity)
  bool controllerRestart = false;
  bool operator==(const ConfigEpoch&) const = default;
};

class ChargeHistory {
 public:
  static constexpr std::uint64_t kNoReservation = UINT64_MAX;

  // A Workload record: `quotaReserved` is its QuotaReserved condition (false
  // for DELETED), `reservedAtNs` that condition's lastTransitionTime (read
  // only inside a snapshot). Returns true when the oldest reservation moved
  // on, so that history only it needed may go (ClusterState prunes).
  bool noteWorkload(std::string_view key, std::uint64_t seq, std::int64_t timeNs,
                    bool quotaReserved, std::int64_t reservedAtNs = 0);
  struct Reservation {
    std::uint64_t seq = 0;  // 0: the workload holds no reservation
    std::int64_t timeNs = 0;
    // Reserved before the ledger saw it: first seen reserved inside a
    // snapshot (the sidecar's first sync or a relist after a gap). Its charge
    // is computed on the state at `seq`, which holds the snapshot's charge
    // inputs (the writer records Workloads after them); `reservedAtNs` is
    // what the QuotaReserved condition says.
    bool snapshot = false;
    std::int64_t reservedAtNs = 0;
  };
  Reservation reservedAt(std::string_view key) const;
  bool anyReservation() const { return !reservationSeqs_.empty(); }
  std::uint64_t oldestReservation() const {
    return reservationSeqs_.empty() ? kNoReservation : *reservationSeqs_.begin();
  }

  // A Snapshot record (schema/observation.h): ADDED opens its bracket,
  // MODIFIED closes it.
  void noteSnapshot(std::uint64_t seq, bool opens) { openSnapshot_ = opens ? seq : 0; }
  bool inSnapshot() const { return openSnapshot_ != 0; }

  void noteInputChange(ChargeInput kind, std::uint64_t seq) {
    lastInputChange_[static_cast<std::size_t>(kind)] = seq;
  }
  std::uint64_t lastInputChange(ChargeInput kind) const {
    return lastInputChange_[static_cast<std::size_t>(kind)];
  }

  // A record of a configuration source Kueue reads (not an ignored one).
  // Returns true when the mapping in effect changed.
  bool noteConfigSource(const std::string& key, std::uint64_t seq, std::int64_t timeNs,
                        std::string_view controllerNamespace, bool deleted);
  // A record of a Kueue controller Pod. Returns true when the mapping in
  // effect changed (the Pod became Running after a configuration change).
  bool noteControllerPod(std::string_view ns, std::string_view name, std::uint64_t seq,
                         std::int64_t timeNs, bool running, bool deleted);
  // Kueue's controller Pods, as the contract recognises them: labelled
  // control-plane=controller-manager (Kueue's manifests) or named like its
  // Deployment's Pods.
  static bool isKueueControllerPod(std::string_view name, bool controllerManagerLabel);

  // Epochs since the oldest reservation's, oldest first; empty when no
  // configuration source was ever seen.
  const std::vector<ConfigEpoch>& epochs() const { return epochs_; }
  // The epoch in effect at `seq`, or nullptr (none yet, or pruned).
  const ConfigEpoch* epochAt(std::uint64_t seq) const;
  bool versionReferenced(std::uint64_t versionSeq) const;

  // Drops epochs no reservation falls in (keeping the newest).
  void pruneEpochs();

  void serialize(schema::ChargeHistory::Builder out) const;
  void restore(schema::ChargeHistory::Reader in);
  void digestInto(Sha256& h) const;

 private:
  struct Source {
    std::uint64_t seq = 0;
    std::int64_t timeNs = 0;
    std::string controllerNamespace;
  };
  bool controllerSeenFor(std::string_view controllerNamespace) const;
  // Makes the newest source (of `ns`'s controller, or any when null) the
  // mapping in effect from `seq`; true when that changed it.
  bool takeNewest(const std::string* ns, std::uint64_t seq, std::int64_t timeNs, bool restart);

  std::map<std::string, Reservation, std::less<>> reservations_;
  std::multiset<std::uint64_t> reservationSeqs_;
  std::array<std::uint64_t, kChargeInputKinds> lastInputChange_{};
  std::map<std::string, Source, std::less<>> sources_;
  std::vector<ConfigEpoch> epochs_;
  std::map<std::string, bool, std::less<>> controllerPods_;  // key -> Running
  std::set<std::string, std::less<>> controllerNamespaces_;  // where one was ever recorded
  std::uint64_t openSnapshot_ = 0;
};

}  // namespace ledger::replay
