#include "ingest/kube/resource_list.h"

#include <sstream>
#include <stdexcept>

namespace ledger::kube {

namespace {

const std::vector<std::string>& preferredVersions(const std::string& group) {
  static const std::vector<std::string> kueue = {"v1beta2", "v1beta1"};
  static const std::vector<std::string> dra = {"v1", "v1beta2", "v1beta1"};
  static const std::vector<std::string> v1 = {"v1"};
  static const std::vector<std::string> none;
  if (group == "kueue.x-k8s.io") return kueue;
  if (group == "resource.k8s.io") return dra;
  if (group.empty() || group == "kueue.openshift.io") return v1;
  return none;
}

std::string knownKind(const std::string& group, const std::string& resource) {
  struct Known {
    const char* group;
    const char* resource;
    const char* kind;
  };
  static const Known known[] = {
      {"kueue.x-k8s.io", "clusterqueues", "ClusterQueue"},
      {"kueue.x-k8s.io", "localqueues", "LocalQueue"},
      {"kueue.x-k8s.io", "resourceflavors", "ResourceFlavor"},
      {"kueue.x-k8s.io", "workloads", "Workload"},
      {"kueue.x-k8s.io", "cohorts", "Cohort"},
      {"resource.k8s.io", "deviceclasses", "DeviceClass"},
      {"resource.k8s.io", "resourceslices", "ResourceSlice"},
      {"resource.k8s.io", "resourceclaims", "ResourceClaim"},
      {"resource.k8s.io", "resourceclaimtemplates", "ResourceClaimTemplate"},
      {"", "pods", "Pod"},
      {"", "namespaces", "Namespace"},
      {"", "configmaps", "ConfigMap"},
      {"kueue.openshift.io", "kueues", "Kueue"},
  };
  for (const auto& k : known) {
    if (group == k.group && resource == k.resource) return k.kind;
  }
  return {};
}

ResourceSpec make(const std::string& group, const std::string& resource) {
  ResourceSpec s;
  s.group = group;
  s.resource = resource;
  s.versions = preferredVersions(group);
  s.kind = knownKind(group, resource);
  return s;
}

bool validName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

}  // namespace

std::string ResourceSpec::id() const {
  std::string id = (group.empty() ? "core" : group) + "/" + resource;
  if (!namespace_.empty() || !name.empty()) id += "/" + namespace_ + "/" + name;
  return id;
}

std::vector<ResourceSpec> defaultResources() {
  std::vector<ResourceSpec> out;
  for (const char* r :
       {"clusterqueues", "localqueues", "resourceflavors", "workloads", "cohorts"}) {
    out.push_back(make("kueue.x-k8s.io", r));
  }
  for (const char* r :
       {"deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates"}) {
    out.push_back(make("resource.k8s.io", r));
  }
  out.push_back(make("", "pods"));
  out.push_back(make("", "namespaces"));
  out.push_back(make("kueue.openshift.io", "kueues"));
  return out;
}

std::vector<ResourceSpec> parseResources(const std::string& list) {
  std::vector<ResourceSpec> out;
  std::stringstream in(list);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    while (!entry.empty() && entry.back() == ' ') entry.pop_back();
    while (!entry.empty() && entry.front() == ' ') entry.erase(0, 1);
    if (entry.empty()) continue;
    if (entry == "default") {
      for (auto& r : defaultResources()) out.push_back(std::move(r));
      continue;
    }
    std::string versions;
    if (auto at = entry.find('@'); at != std::string::npos) {
      versions = entry.substr(at + 1);
      entry = entry.substr(0, at);
    }
    const auto dot = entry.find('.');
    const std::string resource = entry.substr(0, dot);
    const std::string group = dot == std::string::npos ? "" : entry.substr(dot + 1);
    if (!validName(resource) || (dot != std::string::npos && !validName(group))) {
      throw std::invalid_argument(
          "--resources: '" + entry +
          "' is not RESOURCE[.GROUP][@VERSION] (e.g. workloads.kueue.x-k8s.io)");
    }
    ResourceSpec s = make(group, resource);
    if (!versions.empty()) {
      s.versions.clear();
      std::stringstream vs(versions);
      std::string v;
      while (std::getline(vs, v, '|')) {
        if (!validName(v))
          throw std::invalid_argument("--resources: bad version in '" + entry + "'");
        s.versions.push_back(v);
      }
    }
    out.push_back(std::move(s));
  }
  if (out.empty()) throw std::invalid_argument("--resources: the list is empty");
  return out;
}

ResourceSpec configMapResource(const std::string& namespacedName) {
  const auto slash = namespacedName.find('/');
  if (slash == std::string::npos || !validName(namespacedName.substr(0, slash)) ||
      !validName(namespacedName.substr(slash + 1))) {
    throw std::invalid_argument("--config-map: '" + namespacedName + "' is not NAMESPACE/NAME");
  }
  ResourceSpec s = make("", "configmaps");
  s.namespace_ = namespacedName.substr(0, slash);
  s.name = namespacedName.substr(slash + 1);
  return s;
}

std::string groupVersionPath(const std::string& group, const std::string& version) {
  return group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
}

std::string collectionPath(const ResourceSpec& spec, const std::string& version) {
  std::string path = groupVersionPath(spec.group, version);
  if (!spec.namespace_.empty()) path += "/namespaces/" + spec.namespace_;
  return path + "/" + spec.resource;
}

std::string fieldSelectorQuery(const ResourceSpec& spec) {
  return spec.name.empty() ? "" : "fieldSelector=" + urlEncode("metadata.name=" + spec.name);
}

std::string urlEncode(const std::string& value) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

}  // namespace ledger::kube
