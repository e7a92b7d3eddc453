// The typed projection (schema/projection.capnp) of a Kubernetes object:
// what replay needs of Workloads, ClusterQueues, Cohorts, LocalQueues,
// ResourceFlavors, Namespaces, Pods, the resource.k8s.io DRA objects (v1,
// v1beta1, v1beta2 shapes) and the DRA quota configuration (Kueue CR, Kueue
// Configuration, or the ConfigMap holding controller_manager_config.yaml).
// Other kinds project to `other`.
//
// Pure functions; thread-safe. Never throws for odd field types: a field of
// the wrong type is skipped and named in Projection.problems, so one bad
// object becomes a finding at replay instead of a failed ingest.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ingest/json_view.h"

namespace ledger::ingest {

// An apiVersion's group and version: "group/version", or the core group's
// bare "v1" (group ""). Shared by identityOf() and the projectors.
struct GroupVersion {
  std::string_view group;
  std::string_view version;
};
inline GroupVersion splitApiVersion(std::string_view apiVersion) {
  const auto slash = apiVersion.find('/');
  if (slash == std::string_view::npos) return {{}, apiVersion};
  return {apiVersion.substr(0, slash), apiVersion.substr(slash + 1)};
}

// What a projection depends on besides the object itself.
struct ProjectionOptions {
  // The ConfigMap, "NAMESPACE/NAME", whose controller_manager_config.yaml
  // Kueue reads (`--kueue-config`; Kueue's manifests mount
  // kueue-system/kueue-manager-config). Any other ConfigMap holding that key
  // projects as an ignored configuration: a tenant's ConfigMap must not
  // steer the audit.
  std::string kueueConfigMap = "kueue-system/kueue-manager-config";
};

// Cap'n Proto flat-message bytes of a schema::Projection. The view is how
// ingest projects (from simdjson's DOM, json_view.h); an nlohmann value is
// written out and read back through a view, with the same result.
// `rejection`, when given, is set to why the object must not be recorded
// (a timestamp the projection reads is outside the ledger's time range,
// rfc3339.h), else cleared; the bytes are a projection either way.
std::string projectObject(const JsonView& object, const ProjectionOptions& options = {},
                          std::string* rejection = nullptr);
std::string projectObject(const nlohmann::json& object, const ProjectionOptions& options = {},
                          std::string* rejection = nullptr);

// The same for a stored record's JSON (used to rebuild the projection);
// unparsable JSON gives a projection whose problems say so.
std::string projectJsonText(const std::string& objectJson, const ProjectionOptions& options = {});

// Checks a --kueue-config value: "NAMESPACE/NAME", both non-empty. Throws
// std::invalid_argument naming the flag otherwise.
void checkKueueConfigMap(const std::string& namespacedName);

}  // namespace ledger::ingest
