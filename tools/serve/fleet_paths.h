// The paths of `ledger-query serve --fleet DIR` (docs/reference.md, "serve"):
// each cluster's copy is served under /clusters/NAME/ with the whole API of
// a single-ledger serve below it (/clusters/NAME/at/{TIME}/...,
// /clusters/NAME/ledger/v1/..., its web view at /clusters/NAME/); the
// fleet's overview is at / and its JSON at /ledger/v1/clusters.
//
// Pure functions on strings; thread-safe. Errors: none thrown (a path that
// names no cluster is nullopt; unknownCluster() builds the 404).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/serve/api_error.h"

namespace ledger::serve {

inline constexpr std::string_view kClustersPrefix = "/clusters/";

// A request path split into the cluster it names and the path the cluster's
// own serve answers: "/clusters/eu-1/at/now/api" is {"eu-1", "/at/now/api"};
// "/clusters/eu-1" and "/clusters/eu-1/" are {"eu-1", "/"}.
struct ClusterPath {
  std::string cluster;
  std::string rest;
};

// nullopt when `path` is not under /clusters/ or names no cluster
// ("/clusters/", "/clusters//x").
std::optional<ClusterPath> splitClusterPath(std::string_view path);

// The 404 for a cluster the fleet does not hold, naming the ones it does
// (kubectl prints a Status's message).
ApiError unknownCluster(std::string_view cluster, const std::vector<std::string>& known);

}  // namespace ledger::serve
