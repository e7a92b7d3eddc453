// Builders for the Kueue, DRA and core objects the tests feed the ledger,
// in the shapes the API server sends (v1beta1 or v1beta2 where they differ).
//
// Test-only; pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ledger::testing::k8s {

using Json = nlohmann::json;

// `obj` with `key` set to `value` (top level).
inline Json with(Json obj, const std::string& key, Json value) {
  obj[key] = std::move(value);
  return obj;
}

inline Json metadata(const std::string& ns, const std::string& name, const std::string& rv,
                     const std::string& created = "2026-11-01T00:00:00Z") {
  Json m = {{"name", name},
            {"uid", "uid-" + ns + "-" + name},
            {"resourceVersion", rv},
            {"creationTimestamp", created}};
  if (!ns.empty()) m["namespace"] = ns;
  return m;
}

struct Quota {
  std::string resource;
  Json nominal;
  Json borrowingLimit = nullptr;
  Json lendingLimit = nullptr;
};

// A ClusterQueue with one resource group per flavor list entry.
inline Json clusterQueue(const std::string& name, const std::string& version,
                         const std::string& cohort,
                         const std::vector<std::pair<std::string, std::vector<Quota>>>& flavors,
                         const std::string& rv = "1") {
  Json fl = Json::array();
  std::vector<std::string> covered;
  for (const auto& [flavor, quotas] : flavors) {
    Json res = Json::array();
    for (const auto& q : quotas) {
      Json r = {{"name", q.resource}, {"nominalQuota", q.nominal}};
      if (!q.borrowingLimit.is_null()) r["borrowingLimit"] = q.borrowingLimit;
      if (!q.lendingLimit.is_null()) r["lendingLimit"] = q.lendingLimit;
      res.push_back(r);
      if (std::find(covered.begin(), covered.end(), q.resource) == covered.end())
        covered.push_back(q.resource);
    }
    fl.push_back({{"name", flavor}, {"resources", res}});
  }
  Json spec = {{"namespaceSelector", Json::object()},
               {"resourceGroups", Json::array({{{"coveredResources", covered}, {"flavors", fl}}})}};
  if (!cohort.empty()) spec[version == "v1beta1" ? "cohort" : "cohortName"] = cohort;
  return {{"apiVersion", "kueue.x-k8s.io/" + version},
          {"kind", "ClusterQueue"},
          {"metadata", metadata("", name, rv)},
          {"spec", spec}};
}

inline Json localQueue(const std::string& ns, const std::string& name, const std::string& cq,
                       const std::string& version = "v1beta2") {
  return {{"apiVersion", "kueue.x-k8s.io/" + version},
          {"kind", "LocalQueue"},
          {"metadata", metadata(ns, name, "1")},
          {"spec", {{"clusterQueue", cq}}}};
}

inline Json resourceFlavor(const std::string& name, const std::string& version = "v1beta2") {
  return {{"apiVersion", "kueue.x-k8s.io/" + version},
          {"kind", "ResourceFlavor"},
          {"metadata", metadata("", name, "1")},
          {"spec", Json::object()}};
}

inline Json container(const std::string& name, const Json& requests, const Json& claims = nullptr) {
  Json c = {{"name", name},
            {"image", "registry.k8s.io/pause:3.9"},
            {"resources", {{"requests", requests}}}};
  if (!claims.is_null()) c["resources"]["claims"] = claims;
  return c;
}

inline Json podSet(const std::string& name, int count, const Json& podSpec) {
  return {{"name", name}, {"count", count}, {"template", {{"spec", podSpec}}}};
}

inline Json workload(const std::string& ns, const std::string& name, const std::string& queue,
                     const Json& podSets, const std::string& version = "v1beta2",
                     const std::string& rv = "1") {
  return {{"apiVersion", "kueue.x-k8s.io/" + version},
          {"kind", "Workload"},
          {"metadata", metadata(ns, name, rv)},
          {"spec", {{"queueName", queue}, {"podSets", podSets}}}};
}

// Adds status.admission and conditions to a Workload.
inline Json admitted(Json wl, const std::string& cq, const std::string& flavor, const Json& usage,
                     bool admittedToo = true, int count = 0) {
  Json flavors = Json::object();
  for (auto it = usage.begin(); it != usage.end(); ++it) flavors[it.key()] = flavor;
  Json psa = {
      {"name", wl["spec"]["podSets"][0]["name"]}, {"flavors", flavors}, {"resourceUsage", usage}};
  if (count > 0) psa["count"] = count;
  wl["status"]["admission"] = {{"clusterQueue", cq}, {"podSetAssignments", Json::array({psa})}};
  wl["status"]["conditions"] = Json::array({{{"type", "QuotaReserved"},
                                             {"status", "True"},
                                             {"reason", "QuotaReserved"},
                                             {"message", ""}}});
  if (admittedToo) {
    wl["status"]["conditions"].push_back(
        {{"type", "Admitted"}, {"status", "True"}, {"reason", "Admitted"}, {"message", ""}});
  }
  return wl;
}

inline Json finished(Json wl) {
  wl["status"]["conditions"].push_back(
      {{"type", "Finished"}, {"status", "True"}, {"reason", "Succeeded"}, {"message", ""}});
  return wl;
}

inline Json deviceClass(const std::string& name, const std::vector<std::string>& cel,
                        const std::string& extendedResourceName = "",
                        const std::string& created = "2026-11-01T00:00:00Z") {
  Json sel = Json::array();
  for (const auto& e : cel) sel.push_back({{"cel", {{"expression", e}}}});
  Json spec = {{"selectors", sel}};
  if (!extendedResourceName.empty()) spec["extendedResourceName"] = extendedResourceName;
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", metadata("", name, "1", created)},
          {"spec", spec}};
}

// A v1 DeviceRequest with `exactly` set; extra fields merged into exactly.
inline Json exactRequest(const std::string& name, const std::string& cls,
                         const Json& extra = Json::object()) {
  Json exactly = {{"deviceClassName", cls}};
  for (auto it = extra.begin(); it != extra.end(); ++it) exactly[it.key()] = it.value();
  return {{"name", name}, {"exactly", exactly}};
}

inline Json claimTemplate(const std::string& ns, const std::string& name, const Json& requests,
                          const std::string& rv = "1") {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", metadata(ns, name, rv)},
          {"spec", {{"spec", {{"devices", {{"requests", requests}}}}}}}};
}

inline Json device(const std::string& name, const Json& attributes, const Json& consumes = nullptr,
                   const Json& capacity = nullptr) {
  Json d = {{"name", name}, {"attributes", attributes}};
  if (!consumes.is_null()) d["consumesCounters"] = consumes;
  if (!capacity.is_null()) d["capacity"] = capacity;
  return d;
}

inline Json resourceSlice(const std::string& name, const std::string& driver,
                          const std::string& pool, int generation, int sliceCount,
                          const Json& devices, const Json& sharedCounters = nullptr,
                          const std::string& rv = "1") {
  Json spec = {
      {"driver", driver},
      {"nodeName", pool},
      {"pool", {{"name", pool}, {"generation", generation}, {"resourceSliceCount", sliceCount}}}};
  if (!devices.is_null()) spec["devices"] = devices;
  if (!sharedCounters.is_null()) spec["sharedCounters"] = sharedCounters;
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", metadata("", name, rv)},
          {"spec", spec}};
}

inline Json kueueConfig(const Json& mappings, const std::string& rv = "1") {
  return {{"apiVersion", "kueue.openshift.io/v1"},
          {"kind", "Kueue"},
          {"metadata", metadata("", "cluster", rv)},
          {"spec", {{"config", {{"resources", {{"deviceClassMappings", mappings}}}}}}}};
}

inline Json counterSource(const std::string& counter, const std::string& driver,
                          const std::string& selector = "") {
  Json c = {{"name", counter}, {"driver", driver}};
  if (!selector.empty())
    c["deviceSelector"] = {{"type", "CEL"}, {"cel", {{"expression", selector}}}};
  return {{"type", "Counter"}, {"counter", c}};
}

}  // namespace ledger::testing::k8s
