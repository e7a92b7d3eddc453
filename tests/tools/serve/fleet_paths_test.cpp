// The paths of `serve --fleet` (tools/serve/fleet_paths.h): a path under
// /clusters/NAME/ is that cluster's serve's path; an unknown cluster's 404
// names the fleet's clusters.
#include "tools/serve/fleet_paths.h"

#include <catch2/catch.hpp>

#include "tools/serve/kube_api.h"

namespace fleet_paths_test {

using ledger::serve::splitClusterPath;

TEST_CASE("a path under /clusters/NAME/ is that cluster's own path", "[serve][fleet]") {
  auto p = splitClusterPath("/clusters/eu-1/at/now/apis/kueue.x-k8s.io/v1beta1/workloads");
  REQUIRE(p);
  CHECK(p->cluster == "eu-1");
  CHECK(p->rest == "/at/now/apis/kueue.x-k8s.io/v1beta1/workloads");

  p = splitClusterPath("/clusters/eu-1/ledger/v1/range");
  REQUIRE(p);
  CHECK(p->rest == "/ledger/v1/range");

  // The cluster's web view, with and without the closing slash.
  p = splitClusterPath("/clusters/eu-1/");
  REQUIRE(p);
  CHECK(p->cluster == "eu-1");
  CHECK(p->rest == "/");
  p = splitClusterPath("/clusters/eu-1");
  REQUIRE(p);
  CHECK(p->cluster == "eu-1");
  CHECK(p->rest == "/");
}

TEST_CASE("a path naming no cluster is not a cluster's", "[serve][fleet]") {
  CHECK_FALSE(splitClusterPath("/"));
  CHECK_FALSE(splitClusterPath("/ledger/v1/clusters"));
  CHECK_FALSE(splitClusterPath("/clusters"));
  CHECK_FALSE(splitClusterPath("/clusters/"));
  CHECK_FALSE(splitClusterPath("/clusters//at/now"));
  CHECK_FALSE(splitClusterPath("/clustersx/eu-1/"));
  CHECK_FALSE(splitClusterPath("/at/now/clusters/eu-1/"));
}

TEST_CASE("an unknown cluster is a 404 naming the fleet's clusters", "[serve][fleet]") {
  const auto e = ledger::serve::unknownCluster("mars", {"eu-1", "us-2"});
  CHECK(e.code() == 404);
  const std::string message = e.what();
  CHECK(message.find("'mars'") != std::string::npos);
  CHECK(message.find("eu-1, us-2") != std::string::npos);
  CHECK(std::string(ledger::serve::unknownCluster("mars", {}).what()).find("none yet") !=
        std::string::npos);
}

}  // namespace fleet_paths_test

namespace fleet_paths_test {

// Under an unknown cluster these are answered (as the fleet's first copy),
// so that kubectl reaches the request naming objects and prints its 404.
TEST_CASE("discovery paths name no object", "[serve][fleet]") {
  using ledger::serve::isDiscoveryPath;
  CHECK(isDiscoveryPath("/at/now"));
  CHECK(isDiscoveryPath("/at/now/version"));
  CHECK(isDiscoveryPath("/at/now/api"));
  CHECK(isDiscoveryPath("/at/seq:3/api/v1"));
  CHECK(isDiscoveryPath("/at/now/apis"));
  CHECK(isDiscoveryPath("/at/now/apis/kueue.x-k8s.io"));
  CHECK(isDiscoveryPath("/at/now/apis/kueue.x-k8s.io/v1beta1"));
  CHECK_FALSE(isDiscoveryPath("/at/now/api/v1/pods"));
  CHECK_FALSE(isDiscoveryPath("/at/now/apis/kueue.x-k8s.io/v1beta1/workloads"));
  CHECK_FALSE(isDiscoveryPath("/ledger/v1/range"));
  CHECK_FALSE(isDiscoveryPath("/"));
}

}  // namespace fleet_paths_test
