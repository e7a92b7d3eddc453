// The cluster the live-state and --emit-events tests drive the --watch
// daemon through, on the fake API server (tests/ingest/fake_apiserver.h):
// Kueue's resources, and a DRA node whose MIG partition a Job's pod holds
// without its Workload's usage charging it (UnchargedDRA) until
// recordUsage() corrects the charge.
#pragma once

#include <string>

#include "tests/ingest/fake_apiserver.h"
#include "tests/kueue_objects.h"

namespace ledger::testing::live {

using namespace ledger::testing::k8s;
using Resource = FakeApiServer::Resource;

inline const Resource kFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors", "ResourceFlavor",
                               false};
inline const Resource kClusterQueues{"kueue.x-k8s.io", "v1beta2", "clusterqueues", "ClusterQueue",
                                     false};
inline const Resource kLocalQueues{"kueue.x-k8s.io", "v1beta2", "localqueues", "LocalQueue", true};
inline const Resource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads", "Workload", true};
inline const std::string kKueueResources =
    "resourceflavors.kueue.x-k8s.io,clusterqueues.kueue.x-k8s.io,"
    "localqueues.kueue.x-k8s.io,workloads.kueue.x-k8s.io";

// Kueue's resources served with one queue: ResourceFlavor "default",
// ClusterQueue "team-a" with `cpu` of it as nominal quota (no cohort), and
// LocalQueue "lq" in namespace `ns` pointing at it.
inline void cpuQueueCluster(FakeApiServer& server, const std::string& cpu,
                            const std::string& ns = "team-a") {
  for (const Resource& r : {kFlavors, kClusterQueues, kLocalQueues, kWorkloads}) server.serve(r);
  server.create("resourceflavors", resourceFlavor("default"));
  server.create("clusterqueues",
                clusterQueue("team-a", "v1beta2", "", {{"default", {{"cpu", cpu}}}}));
  server.create("localqueues", localQueue(ns, "lq", "team-a"));
}

inline Json migDevice(const std::string& name, const std::string& memory) {
  return device(
      name, {{"type", {{"string", "mig"}}}},
      Json::array({{{"counterSet", "gpu-0-cs"}, {"counters", {{"memory", {{"value", memory}}}}}}}));
}

inline const Json kJobOwner = Json::array({{{"apiVersion", "batch/v1"},
                                            {"kind", "Job"},
                                            {"name", "ja"},
                                            {"uid", "job-ja"},
                                            {"controller", true}}});
inline const Json kPodSpec = {{"containers", Json::array({container("c", {{"cpu", "1"}})})}};

inline Json jobWorkload(const Json& usage) {
  Json wl = admitted(workload("a", "wl-ja", "lq", Json::array({podSet("main", 1, kPodSpec)})),
                     "team-a", "default", usage);
  wl["metadata"]["ownerReferences"] = kJobOwner;
  return wl;
}

// A Job's Workload in a/lq, admitted to ClusterQueue team-a, whose pod will
// hold MIG partition mig-a; Kueue's DRA mapping charges DeviceClass
// mig.nvidia.com as gpu.memory from the devices' memory counter (as
// tests/replay/kueue/pools_test.cpp).
inline void draCluster(FakeApiServer& server) {
  for (const Resource& r :
       {kFlavors, kClusterQueues, kLocalQueues, kWorkloads, Resource{"", "v1", "pods", "Pod", true},
        Resource{"kueue.openshift.io", "v1", "kueues", "Kueue", false},
        Resource{"resource.k8s.io", "v1", "deviceclasses", "DeviceClass", false},
        Resource{"resource.k8s.io", "v1", "resourceslices", "ResourceSlice", false},
        Resource{"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", true}}) {
    server.serve(r);
  }
  Json mapping = {{"name", "gpu.memory"},
                  {"deviceClassNames", {"mig.nvidia.com"}},
                  {"sources", Json::array({counterSource("memory", "gpu.nvidia.com")})}};
  server.create("kueues", kueueConfig(Json::array({mapping})));
  server.create(
      "deviceclasses",
      deviceClass("mig.nvidia.com", {"device.attributes['gpu.nvidia.com'].type == 'mig'"}));
  Json counters =
      Json::array({{{"name", "gpu-0-cs"}, {"counters", {{"memory", {{"value", "40320Mi"}}}}}}});
  server.create("resourceslices", resourceSlice("node-1-counters", "gpu.nvidia.com", "node-1", 1, 2,
                                                nullptr, counters));
  server.create("resourceslices",
                resourceSlice("node-1-devices", "gpu.nvidia.com", "node-1", 1, 2,
                              Json::array({migDevice("mig-a", "4864Mi")}), nullptr));
  server.create("resourceflavors", resourceFlavor("default"));
  server.create(
      "clusterqueues",
      clusterQueue("team-a", "v1beta2", "", {{"default", {{"cpu", 10}, {"gpu.memory", "80Gi"}}}}));
  server.create("localqueues", localQueue("a", "lq", "team-a"));
  server.create("workloads", jobWorkload({{"cpu", "1"}}));
}

// The pod and its claim holding mig-a: opens UnchargedDRA on wl-ja.
inline void holdPartition(FakeApiServer& server) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", metadata("a", "ja-pod", "1")},
              {"spec", kPodSpec},
              {"status", {{"phase", "Running"}}}};
  pod["metadata"]["ownerReferences"] = kJobOwner;
  server.create("pods", pod);
  Json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", metadata("a", "ja-claim", "1")},
      {"spec", {{"devices", {{"requests", Json::array({exactRequest("gpu", "mig.nvidia.com")})}}}}},
      {"status",
       {{"allocation",
         {{"devices",
           {{"results", Json::array({{{"request", "gpu"},
                                      {"driver", "gpu.nvidia.com"},
                                      {"pool", "node-1"},
                                      {"device", "mig-a"}}})}}}}},
        {"reservedFor",
         Json::array({{{"resource", "pods"}, {"name", "ja-pod"}, {"uid", "uid-a-ja-pod"}}})}}}};
  claim["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "v1"},
                                                       {"kind", "Pod"},
                                                       {"name", "ja-pod"},
                                                       {"uid", "uid-a-ja-pod"},
                                                       {"controller", true}}});
  server.create("resourceclaims", claim);
}

inline void recordUsage(FakeApiServer& server, const Json& usage) {
  server.update("workloads", "a", "wl-ja",
                [&](Json& o) { o["status"] = jobWorkload(usage)["status"]; });
}

inline const std::string kDraResources =
    kKueueResources +
    ",pods,kueues.kueue.openshift.io,deviceclasses.resource.k8s.io,"
    "resourceslices.resource.k8s.io,resourceclaims.resource.k8s.io";

}  // namespace ledger::testing::live
