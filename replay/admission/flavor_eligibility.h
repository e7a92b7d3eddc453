// Whether a pod set may use a ResourceFlavor at all, before any quota is
// looked at: Kueue's FlavorAssigner.checkFlavorForPodSets
// (pkg/scheduler/flavorassigner/flavorassigner.go).
//
//  - taints: the first NoSchedule/NoExecute taint in the flavor's nodeTaints
//    that neither the pod's tolerations nor the flavor's own tolerations
//    tolerate (corev1helpers.FindMatchingUntoleratedTaint) rejects it, with
//    the taint printed as Go prints a corev1.Taint value:
//    "untolerated taint {instance spot NoSchedule <nil>} in flavor tainted";
//  - node selector and required node affinity, restricted to the label keys
//    THIS flavor declares in nodeLabels (flavorSelector: other keys are
//    ignored; a required-affinity term left empty matches any flavor), are
//    evaluated against the flavor's nodeLabels as if they were a node's
//    (nodeaffinity.RequiredNodeAffinity.Match):
//    "flavor one doesn't match node affinity".
//
// Pure functions over projections; thread-safe; never throw. A requirement
// with an operator Kubernetes does not know, or Gt/Lt with a value that is not
// an integer, does not match (kube-scheduler reports a parse error instead).
#pragma once

#include <string>

#include "schema/projection.capnp.h"

namespace ledger::replay::admission {

// Kueue's rejection message, or "" when the flavor is eligible for the pod.
std::string flavorIneligibility(const std::string& flavorName,
                                schema::ResourceFlavor::Reader flavor,
                                schema::PodSpec::Reader podSpec);

// v1.Toleration.ToleratesTaint.
bool toleratesTaint(schema::Toleration::Reader toleration, schema::Taint::Reader taint);

// flavorSelector(podSpec, keys of nodeLabels).Match(node with nodeLabels).
bool matchesNodeAffinity(schema::ResourceFlavor::Reader flavor, schema::PodSpec::Reader podSpec);

}  // namespace ledger::replay::admission
