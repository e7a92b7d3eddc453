#include "tools/serve/resource_catalog.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ledger/format.h"
#include "tools/serve/api_error.h"

namespace ledger::serve {

namespace {

struct KnownNames {
  const char* group;
  const char* kind;
  const char* plural;
  std::vector<std::string> shortNames;
};

// The names the defining API gives (Kueue's CRDs under
// config/components/crd/bases, Kubernetes' built-in types); any other kind
// gets the API machinery's guess.
const std::vector<KnownNames>& knownNames() {
  static const std::vector<KnownNames> names = {
      {"kueue.x-k8s.io", "ClusterQueue", "clusterqueues", {"cq"}},
      {"kueue.x-k8s.io", "LocalQueue", "localqueues", {"queue", "queues", "lq"}},
      {"kueue.x-k8s.io", "Workload", "workloads", {"kwl", "kueueworkload", "kueueworkloads"}},
      {"kueue.x-k8s.io", "ResourceFlavor", "resourceflavors", {"flavor", "flavors", "rf"}},
      {"kueue.x-k8s.io", "Cohort", "cohorts", {"co"}},
      {"", "Pod", "pods", {"po"}},
      {"", "Namespace", "namespaces", {"ns"}},
      {"", "ConfigMap", "configmaps", {"cm"}},
      {"", "Node", "nodes", {"no"}},
      {"", "Event", "events", {"ev"}},
      {"resource.k8s.io", "DeviceClass", "deviceclasses", {}},
      {"resource.k8s.io", "ResourceClaim", "resourceclaims", {}},
      {"resource.k8s.io", "ResourceClaimTemplate", "resourceclaimtemplates", {}},
      {"resource.k8s.io", "ResourceSlice", "resourceslices", {}},
  };
  return names;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// apimachinery meta.UnsafeGuessKindToResource.
std::string guessPlural(std::string_view kind) {
  std::string singular = lower(kind);
  if (singular.empty()) return singular;
  switch (singular.back()) {
    case 's':
      return singular + "es";
    case 'y': {
      if (singular.size() >= 2 &&
          std::string_view("aeiou").find(singular[singular.size() - 2]) == std::string_view::npos) {
        return singular.substr(0, singular.size() - 1) + "ies";
      }
      return singular + "s";
    }
    default:
      return singular + "s";
  }
}

ApiResource named(std::string group, std::string version, std::string kind, bool namespaced) {
  ApiResource r;
  r.group = std::move(group);
  r.version = std::move(version);
  r.kind = std::move(kind);
  r.singular = lower(r.kind);
  r.plural = guessPlural(r.kind);
  r.namespaced = namespaced;
  for (const auto& k : knownNames()) {
    if (r.group == k.group && r.kind == k.kind) {
      r.plural = k.plural;
      r.shortNames = k.shortNames;
    }
  }
  return r;
}

nlohmann::json resourceJson(const ApiResource& r) {
  nlohmann::json j = {{"name", r.plural},
                      {"singularName", r.singular},
                      {"namespaced", r.namespaced},
                      {"kind", r.kind},
                      {"verbs", {"get", "list", "watch"}}};
  if (!r.shortNames.empty()) j["shortNames"] = r.shortNames;
  return j;
}

}  // namespace

ResourceCatalog ResourceCatalog::discover(const Ledger& ledger) {
  ResourceCatalog catalog;
  // object_index record keys: "r" group "/" kind "/" namespace "/" name "\0" seq
  // (ledger/format.h), so one seek finds a kind's first object and the next
  // jumps past all of its keys.
  std::string key;
  std::string from = "r";
  for (;;) {
    throwIfFailed(ledger.seekObjectIndex(from, &key));
    if (key.empty() || key[0] != 'r') break;
    const std::string_view body = std::string_view(key).substr(1);
    const auto groupEnd = body.find('/');
    const auto kindEnd =
        groupEnd == std::string_view::npos ? groupEnd : body.find('/', groupEnd + 1);
    const auto nul = body.find('\0');
    if (kindEnd == std::string_view::npos || nul == std::string_view::npos ||
        body.size() < nul + 9) {
      throw ApiError::internal("object index key is malformed: " + key.substr(0, 64));
    }
    const std::string group(body.substr(0, groupEnd));
    const std::string kind(body.substr(groupEnd + 1, kindEnd - groupEnd - 1));
    const bool namespaced = body.size() > kindEnd + 1 && body[kindEnd + 1] != '/';
    Record record;
    throwIfFailed(ledger.read(format::decodeU64(body.substr(nul + 1, 8)), &record));
    catalog.resources_.push_back(named(group, record.identity.version, kind, namespaced));
    from = "r" + group + "/" + kind + "0";  // '0' follows '/'
  }
  const std::string lg(kLedgerGroup), lv(kLedgerVersion);
  auto own = [&](const char* kind, const char* plural, std::vector<std::string> shortNames,
                 bool namespaced) {
    ApiResource r = named(lg, lv, kind, namespaced);
    r.plural = plural;
    r.shortNames = std::move(shortNames);
    r.ledgerOwn = true;
    catalog.resources_.push_back(std::move(r));
  };
  own("QueueUsage", "queueusages", {"qu"}, false);
  own("LedgerFinding", "ledgerfindings", {"lf"}, false);
  own("WorkloadHistory", "workloadhistories", {"wlh"}, true);
  own("WorkloadWhy", "workloadwhys", {"wlw"}, true);
  return catalog;
}

const ApiResource* ResourceCatalog::find(std::string_view group, std::string_view version,
                                         std::string_view plural) const {
  for (const auto& r : resources_) {
    if (r.group == group && r.version == version && r.plural == plural) return &r;
  }
  return nullptr;
}

bool ResourceCatalog::hasGroupVersion(std::string_view group, std::string_view version) const {
  if (group.empty() && version == "v1") return true;
  return std::any_of(resources_.begin(), resources_.end(), [&](const ApiResource& r) {
    return r.group == group && r.version == version;
  });
}

std::string ResourceCatalog::apiVersionsJson() const {
  return nlohmann::json{{"kind", "APIVersions"},
                        {"versions", {"v1"}},
                        {"serverAddressByClientCIDRs",
                         {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}}
      .dump();
}

std::string ResourceCatalog::apiGroupListJson() const {
  std::map<std::string, std::set<std::string>> versions;
  for (const auto& r : resources_) {
    if (!r.group.empty()) versions[r.group].insert(r.version);
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [group, vs] : versions) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : vs) list.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
    groups.push_back({{"name", group}, {"versions", list}, {"preferredVersion", list.back()}});
  }
  return nlohmann::json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}.dump();
}

std::string ResourceCatalog::resourceListJson(std::string_view group,
                                              std::string_view version) const {
  if (!hasGroupVersion(group, version)) return {};
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : resources_) {
    if (r.group == group && r.version == version) list.push_back(resourceJson(r));
  }
  const std::string gv =
      group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
  return nlohmann::json{
      {"kind", "APIResourceList"}, {"apiVersion", "v1"}, {"groupVersion", gv}, {"resources", list}}
      .dump();
}

}  // namespace ledger::serve
