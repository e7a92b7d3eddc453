// Test-only builders for admission tests: a ClusterState assembled from
// Kubernetes objects (JSON, projected by ingest's projector as an ingest
// would), ClusterQueue/flavor/pod set builders shaped like Kueue's
// utiltestingapi wrappers, and a FlavorAssigner run with upstream's
// testOracle (every preemption simulation answers Preempt at height 0 unless
// the case says otherwise).
//
// Not thread-safe; helpers REQUIRE on failure.
#pragma once

#include <capnp/serialize.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ingest/ingester.h"
#include "ingest/projector.h"
#include "ingest/workload_manifest.h"
#include "ledger/ledger.h"
#include "replay/admission/flavor_assigner.h"
#include "replay/kueue/resources.h"

namespace ledger::testing::admission {

using Json = nlohmann::json;
using namespace ledger::replay;
using namespace ledger::replay::admission;
using ingest::workloadForJob;

// A Workload or Job object as the fold holds it, projected as ingest does.
inline std::unique_ptr<StoredObject> workloadObject(Json object) {
  return std::make_unique<StoredObject>(0, ingest::workloadRecord(std::move(object)).asPtr());
}

inline Json quota(const std::string& resource, const std::string& nominal,
                  const std::string& borrowingLimit = "", const std::string& lendingLimit = "") {
  Json q = {{"name", resource}, {"nominalQuota", nominal}};
  if (!borrowingLimit.empty()) q["borrowingLimit"] = borrowingLimit;
  if (!lendingLimit.empty()) q["lendingLimit"] = lendingLimit;
  return q;
}

inline Json flavorQuotas(const std::string& flavor, const std::vector<Json>& resources) {
  return Json{{"name", flavor}, {"resources", resources}};
}

// A resource group covering every resource its flavors name (MakeClusterQueue.ResourceGroup).
inline Json group(const std::vector<Json>& flavors) {
  Json covered = Json::array();
  for (const auto& f : flavors) {
    for (const auto& r : f["resources"]) {
      if (std::find(covered.begin(), covered.end(), r["name"]) == covered.end()) {
        covered.push_back(r["name"]);
      }
    }
  }
  return Json{{"coveredResources", covered}, {"flavors", flavors}};
}

inline Json clusterQueueWith(const std::string& name, const std::vector<Json>& groups,
                             const std::string& cohort = "", const Json& extraSpec = Json::object(),
                             const std::string& apiVersion = "kueue.x-k8s.io/v1beta2") {
  Json spec = {{"resourceGroups", groups}};
  if (!cohort.empty())
    spec[apiVersion == "kueue.x-k8s.io/v1beta1" ? "cohort" : "cohortName"] = cohort;
  spec.update(extraSpec);
  return Json{{"apiVersion", apiVersion},
              {"kind", "ClusterQueue"},
              {"metadata", {{"name", name}, {"uid", "uid-cq-" + name}}},
              {"spec", spec}};
}

inline Json cohort(const std::string& name, const std::string& parent,
                   const std::vector<Json>& groups) {
  Json spec = {{"resourceGroups", groups}};
  if (!parent.empty()) spec["parentName"] = parent;
  return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
              {"kind", "Cohort"},
              {"metadata", {{"name", name}, {"uid", "uid-cohort-" + name}}},
              {"spec", spec}};
}

inline Json resourceFlavorWith(const std::string& name, const Json& spec = Json::object()) {
  return Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
              {"kind", "ResourceFlavor"},
              {"metadata", {{"name", name}, {"uid", "uid-rf-" + name}}},
              {"spec", spec}};
}

inline Json taint(const std::string& key, const std::string& value, const std::string& effect) {
  return Json{{"key", key}, {"value", value}, {"effect", effect}};
}

inline Json toleration(const std::string& key, const std::string& op, const std::string& value,
                       const std::string& effect) {
  return Json{{"key", key}, {"operator", op}, {"value", value}, {"effect", effect}};
}

// A pod set with one container requesting `requests`; `podSpec` is merged
// into the template's spec (nodeSelector, tolerations, affinity).
inline Json podSetWith(const std::string& name, int count,
                       const std::map<std::string, std::string>& requests,
                       const Json& podSpec = Json::object()) {
  Json spec = {
      {"containers", Json::array({{{"name", "c"}, {"resources", {{"requests", requests}}}}})}};
  spec.update(podSpec);
  return Json{{"name", name}, {"count", count}, {"template", {{"spec", spec}}}};
}

inline Json requiredAffinity(const Json& terms) {
  return Json{
      {"affinity",
       {{"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}}};
}

class Fixture {
 public:
  // The flavors of upstream TestAssignFlavors.
  Fixture() {
    add(resourceFlavorWith("default"));
    add(resourceFlavorWith("one", {{"nodeLabels", {{"type", "one"}}}}));
    add(resourceFlavorWith("two", {{"nodeLabels", {{"type", "two"}}}}));
    add(resourceFlavorWith("b_one", {{"nodeLabels", {{"b_type", "one"}}}}));
    add(resourceFlavorWith("b_two", {{"nodeLabels", {{"b_type", "two"}}}}));
    add(resourceFlavorWith("tainted", {{"nodeTaints", {taint("instance", "spot", "NoSchedule")}}}));
    add(resourceFlavorWith(
        "taint_and_toleration",
        {{"nodeTaints", {taint("instance", "spot", "NoSchedule")}},
         {"tolerations", {toleration("instance", "Equal", "spot", "NoSchedule")}}}));
    add(resourceFlavorWith("label-x-a", {{"nodeLabels", {{"x", "a"}}}}));
    add(resourceFlavorWith("label-xy-b", {{"nodeLabels", {{"x", "b"}, {"y", "k"}}}}));
  }

  void add(const Json& object, std::uint64_t type = 0) {
    Record header;
    header.seq = ++seq_;
    header.type = static_cast<EventType>(type);
    header.timeNs = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(seq_);
    header.identity = ingest::identityOf(object);
    const std::string bytes = buildProjectedRecord(header, ingest::projectObject(object));
    auto words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
    std::memcpy(words.begin(), bytes.data(), words.size() * sizeof(capnp::word));
    state.apply(seq_, words.asPtr());
  }
  void remove(const Json& object) { add(object, 2); }

  // Usage of a ClusterQueue in a flavor ("3" cpu, "10Mi" memory...).
  void use(const std::string& cq, const std::string& flavor, const std::string& resource,
           const std::string& q) {
    usage[cq][{flavor, resource}] += Quantity::parse(q);
  }
  void simulate(const std::string& flavor, const std::string& resource, PreemptionMode mode,
                int borrowAfter) {
    simulation[{flavor, resource}] = PreemptionSimulation{mode, borrowAfter};
  }

  Assignment assign(const std::string& cq, const std::vector<Json>& podSets) {
    workload_ = workloadObject(Json{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                    {"kind", "Workload"},
                                    {"metadata", {{"name", "wl"}, {"namespace", "default"}}},
                                    {"spec", {{"queueName", "lq"}, {"podSets", podSets}}}});
    std::vector<PodSetRequest> requests;
    for (auto ps : workload_->projection().getBody().getWorkload().getPodSets()) {
      PodSetRequest r;
      r.name = ps.getName().cStr();
      r.count = ps.getCount();
      r.podSpec = ps.getTemplate();
      for (const auto& [name, q] : podRequests(ps.getTemplate(), nullptr)) {
        r.requests[name] = kueueUnits(name, q) * r.count;
      }
      requests.push_back(std::move(r));
    }
    tree_ = std::make_unique<QuotaTree>(state, usage);
    view_ = std::make_unique<QuotaView>(*tree_);
    AssignerContext ctx{state,
                        *view_,
                        cq,
                        [this](const FlavorResource& fr, Int128) {
                          auto it = simulation.find(fr);
                          return it == simulation.end()
                                     ? PreemptionSimulation{PreemptionMode::kPreempt, 0}
                                     : it->second;
                        },
                        canPreemptWhileBorrowing,
                        {}};
    return assignFlavors(ctx, requests);
  }

  ClusterState state;
  QuotaTree::Usage usage;
  std::map<FlavorResource, PreemptionSimulation> simulation;
  bool canPreemptWhileBorrowing = false;

 private:
  std::uint64_t seq_ = 0;
  std::unique_ptr<StoredObject> workload_;
  std::unique_ptr<QuotaTree> tree_;
  std::unique_ptr<QuotaView> view_;
};

// "flavor/Mode" per resource of a pod set, e.g. {"cpu", "two/Fit"}.
inline std::map<std::string, std::string> flavorsOf(const PodSetAssignment& ps) {
  std::map<std::string, std::string> out;
  for (const auto& [res, c] : ps.flavors) out[res] = c.flavor + "/" + modeName(c.mode);
  return out;
}

inline std::vector<std::string> sortedReasons(const PodSetAssignment& ps) {
  std::vector<std::string> r = ps.reasons;
  std::sort(r.begin(), r.end());
  return r;
}

}  // namespace ledger::testing::admission
