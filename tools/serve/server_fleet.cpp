// LedgerServer's fleet (server.h): the routes of `serve --fleet DIR`
// (fleet_paths.h) and the copies it serves.
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"
#include "tools/serve/fleet_overview.h"
#include "tools/serve/fleet_paths.h"
#include "tools/serve/kube_api.h"
#include "tools/serve/moment.h"
#include "tools/serve/server.h"
#include "tools/serve/web_assets.h"

namespace ledger::serve {

void LedgerServer::answerFleet(ApiRequest request, httplib::Response& res) {
  try {
    if (auto split = splitClusterPath(request.path)) {
      std::vector<std::string> known;
      ServedLedger* copy = findCopy(split->cluster, &known);
      // kubectl asks discovery before anything and prints no message of a
      // refused one (kube_api.h): under an unknown cluster discovery is the
      // fleet's first copy's, and the request naming objects is the 404
      // naming the clusters, which kubectl prints.
      if (copy == nullptr && !known.empty() && isDiscoveryPath(split->rest)) {
        copy = findCopy(known.front(), &known);
      }
      if (copy == nullptr) throw unknownCluster(split->cluster, known);
      request.path = std::move(split->rest);
      answerLedger(*copy, request, res);
      return;
    }
    if (request.method != "GET" && request.method != "HEAD") {
      throw ApiError::methodNotAllowed("the fleet is read-only: " + request.method +
                                       " is not allowed");
    }
    if (request.path == "/ledger/v1/clusters") {
      res.status = 200;
      res.set_content(clustersJson(), std::string(kJsonType));
      return;
    }
    // The fleet's overview at /; the single-cluster page's files beside it.
    const WebAsset* asset = request.path == "/" ? findWebAsset("/assets/fleet.html")
                            : request.path.starts_with("/assets/") ? findWebAsset(request.path)
                                                                   : nullptr;
    if (asset == nullptr) {
      throw ApiError::notFound("path " + request.path +
                               " is not served: a fleet serve answers each cluster under "
                               "/clusters/NAME/ (its API and web view), the fleet's overview at / "
                               "and /ledger/v1/clusters");
    }
    res.status = 200;
    res.set_content(asset->body.data(), asset->body.size(), std::string(asset->contentType));
  } catch (const ApiError& e) {
    res.status = e.code();
    res.set_content(statusJson(e), std::string(kJsonType));
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", request.method, request.path, e.what());
    const ApiError internal = ApiError::internal(e.what());
    res.status = internal.code();
    res.set_content(statusJson(internal), std::string(kJsonType));
  }
}

ServedLedger* LedgerServer::findCopy(const std::string& cluster,
                                     std::vector<std::string>* known) const {
  std::lock_guard lock(copiesMu_);
  if (auto it = copies_.find(cluster); it != copies_.end()) return it->second.get();
  for (const auto& [name, copy] : copies_) known->push_back(name);
  return nullptr;
}

void LedgerServer::addNewCopies() {
  for (const auto& [name, dir] : options_.fleetCopies()) {
    {
      std::lock_guard lock(copiesMu_);
      if (copies_.contains(name)) continue;
    }
    try {
      auto copy = std::make_unique<ServedLedger>(dir);
      std::lock_guard lock(copiesMu_);
      copies_.emplace(name, std::move(copy));
      spdlog::info("serving cluster {} from {}", name, dir);
    } catch (const std::exception& e) {
      spdlog::warn("cluster {}: {} cannot be opened yet: {}", name, dir, e.what());
    }
  }
}

std::string LedgerServer::clustersJson() {
  std::vector<std::pair<std::string, ServedLedger*>> copies;
  {
    std::lock_guard lock(copiesMu_);
    for (const auto& [name, copy] : copies_) copies.emplace_back(name, copy.get());
  }
  const std::int64_t now = nowNs();
  constexpr std::int64_t kSecond = 1'000'000'000;
  nlohmann::json out = {{"now", formatRfc3339(now / kSecond * kSecond)},
                        {"clusters", nlohmann::json::array()}};
  for (const auto& [name, served] : copies) {
    const auto snap = served->current();
    const ProofState proof = served->proof();
    ServeContext ctx{*snap->ledger, snap->catalog, served->states(), query_, served->answers(),
                     now,           &proof};
    std::optional<bool> isSigned;
    if (options_.copySigned) isSigned = options_.copySigned(*snap->ledger);
    out["clusters"].push_back(clusterRow(name, ctx, isSigned));
  }
  return out.dump();
}

}  // namespace ledger::serve
