// Which API resources the daemon lists and watches (docs/reference.md "Objects that
// matter"), and how their URLs are built.
//
// The default list: kueue.x-k8s.io (v1beta2, else v1beta1) clusterqueues,
// localqueues, resourceflavors, workloads, cohorts; resource.k8s.io (v1, else
// v1beta2, else v1beta1) deviceclasses, resourceslices, resourceclaims,
// resourceclaimtemplates; core v1 pods, namespaces; kueue.openshift.io v1
// kueues. ConfigMaps only when named (--config-map NAMESPACE/NAME).
//
// --resources takes a comma-separated list of RESOURCE[.GROUP] as kubectl
// writes them ("workloads.kueue.x-k8s.io", "pods"), with optional
// "@VERSION[|VERSION…]" preferences; "default" stands for the list above.
//
// Value types and pure functions; thread-safe. Errors: parse functions throw
// std::invalid_argument with the offending entry.
#pragma once

#include <string>
#include <vector>

namespace ledger::kube {

struct ResourceSpec {
  std::string group;                  // "" for the core group
  std::vector<std::string> versions;  // preference order; empty: the group's preferred version
  std::string resource;               // plural, lower case: "workloads"
  std::string kind;                   // "Workload"; filled by discovery when empty
  std::string namespace_;             // "" for all namespaces
  std::string name;                   // "" for all; else a fieldSelector on metadata.name

  // Stable name, also the ledger cursor's: "kueue.x-k8s.io/workloads",
  // "core/pods", "core/configmaps/ns/name".
  std::string id() const;
};

std::vector<ResourceSpec> defaultResources();
std::vector<ResourceSpec> parseResources(const std::string& list);
ResourceSpec configMapResource(const std::string& namespacedName);  // "ns/name"

// "/api/v1" or "/apis/GROUP/VERSION".
std::string groupVersionPath(const std::string& group, const std::string& version);
// The collection URL path for `spec` at `version`, without a query.
std::string collectionPath(const ResourceSpec& spec, const std::string& version);
// fieldSelector for a named resource ("" when none), URL-encoded.
std::string fieldSelectorQuery(const ResourceSpec& spec);
// Percent-encodes a query parameter value.
std::string urlEncode(const std::string& value);

}  // namespace ledger::kube
