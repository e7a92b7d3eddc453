// The ledger's own objects in the log: what the sidecar saw and did not see.
//
// The sidecar records, beside the cluster's objects, one object of its own
// per snapshot (docs/reference.md "Observation"), so that the chain itself
// says when the ledger was blind and verify, the fold, the fleet's copies and
// every answer over a period read it from the same place:
//
//   apiVersion: kueue-dra-ledger.io/v1
//   kind: Snapshot
//   metadata: {name: snapshot-<first seq>, uid: <same>, resourceVersion: "1" | "2"}
//   spec:   {reason: first-sync | relist, startedAt: TIME, resources: [ID...]}
//   status: {firstSeq, lastSeq, completedAt: TIME,
//            resources: [{resource: ID, resourceVersion, objects, deleted}],
//            missing: [ID...],            # LISTs that did not end in time
//            gaps: [{from: TIME, to: TIME, resources: [ID...], reason}]}
//
// ADDED (resourceVersion "1", spec only) opens the bracket before the first
// LIST item; MODIFIED (resourceVersion "2", with status) closes it after the
// last. Resource IDs are the daemon's ("kueue.x-k8s.io/workloads").
//
// Annotations the sidecar adds to a recorded object (never to the cluster's):
//   kReceivedAnnotation   the receipt time, when the record is stamped with
//                         the earlier time the object gives for its change
//                         (a late event);
//   kUnobservedSince      on an object a relist recorded after a gap: the last
//                         moment the ledger knew its resource was current.
//                         The change happened between then and the record.
//
// Constants only; no code.
#pragma once

#include <string_view>

namespace ledger::observation {

inline constexpr std::string_view kGroup = "kueue-dra-ledger.io";
inline constexpr std::string_view kVersion = "v1";
inline constexpr std::string_view kApiVersion = "kueue-dra-ledger.io/v1";
inline constexpr std::string_view kSnapshotKind = "Snapshot";
// object_index keys of every Snapshot (cluster-scoped: empty namespace).
inline constexpr std::string_view kSnapshotKeyPrefix = "kueue-dra-ledger.io/Snapshot//";

inline constexpr std::string_view kReasonFirstSync = "first-sync";
inline constexpr std::string_view kReasonRelist = "relist";

inline constexpr std::string_view kReceivedAnnotation = "kueue-dra-ledger/received";
inline constexpr std::string_view kUnobservedSinceAnnotation = "kueue-dra-ledger/unobserved-since";

}  // namespace ledger::observation
