#include "tools/serve/fleet_paths.h"

namespace ledger::serve {

std::optional<ClusterPath> splitClusterPath(std::string_view path) {
  if (!path.starts_with(kClustersPrefix)) return std::nullopt;
  const std::string_view tail = path.substr(kClustersPrefix.size());
  const auto slash = tail.find('/');
  const std::string_view cluster = tail.substr(0, slash);
  if (cluster.empty()) return std::nullopt;
  ClusterPath out{std::string(cluster), "/"};
  if (slash != std::string_view::npos) out.rest = std::string(tail.substr(slash));
  return out;
}

ApiError unknownCluster(std::string_view cluster, const std::vector<std::string>& known) {
  std::string names;
  for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
  return ApiError::notFound(
      "cluster '" + std::string(cluster.substr(0, 253)) +
      "' is not in the fleet; its clusters: " + (names.empty() ? std::string("none yet") : names));
}

}  // namespace ledger::serve
