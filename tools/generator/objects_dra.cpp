// resource.k8s.io/v1 objects: DeviceClasses, ResourceClaimTemplates, the
// ResourceSlices a GPU driver publishes (partitionable devices with shared
// counters) and the ResourceClaims generated for pods.
#include "tools/generator/objects.h"

namespace ledger::gen {

namespace {

// What one A100-40GB offers, and what a 1g.5gb MIG partition takes of it.
J counters(bool whole) {
  return {{"memory", {{"value", memQuantity(whole ? kGpuMemoryMi : kMigMemoryMi)}}},
          {"multiprocessors", {{"value", whole ? "98" : "14"}}},
          {"copy-engines", {{"value", whole ? "7" : "1"}}},
          {"decoders", {{"value", whole ? "5" : "0"}}},
          {"encoders", {{"value", "0"}}},
          {"jpeg-engines", {{"value", whole ? "1" : "0"}}},
          {"ofa-engines", {{"value", whole ? "1" : "0"}}}};
}

// The driver's opaque configuration a claim carries from its template, and
// that the scheduler copies into the allocation.
J gpuConfig(bool mig) {
  J sharing =
      mig ? J{{"strategy", "MPS"}, {"mpsConfig", {{"defaultActiveThreadPercentage", 100}}}}
          : J{{"strategy", "TimeSlicing"}, {"timeSlicingConfig", {{"interval", "Default"}}}};
  J parameters = {{"apiVersion", "resource.nvidia.com/v1beta1"},
                  {"kind", mig ? "MigDeviceConfig" : "GpuConfig"},
                  {"sharing", sharing}};
  return {{"requests", J::array({"gpu"})},
          {"opaque", {{"driver", kDriver}, {"parameters", parameters}}}};
}

std::string counterSet(int gpu) { return "gpu-" + std::to_string(gpu) + "-counter-set"; }

std::string gpuUuid(const NodeState& node, int gpu) {
  return "GPU-" + node.uid.substr(0, 24) + std::to_string(100000 + gpu);
}

J sliceMeta(const NodeState& node, const std::string& name, const std::string& uid,
            const std::string& rv) {
  return {{"name", name},
          {"generateName", node.name + "-gpu.nvidia.com-"},
          {"uid", uid},
          {"resourceVersion", rv},
          {"generation", node.generation},
          {"creationTimestamp", rfc3339(node.createdNs)},
          {"ownerReferences", J::array({{{"apiVersion", "v1"},
                                         {"kind", "Node"},
                                         {"name", node.name},
                                         {"uid", node.uid},
                                         {"controller", true}}})}};
}

J slice(const NodeState& node, J meta, J spec, std::int64_t nowNs) {
  meta["managedFields"] =
      J::array({managedEntry("gpu-kubelet-plugin", "Update", kResourceApi, nowNs,
                             {{"metadata", ownedMetadata(meta)}, {"spec", spec}})});
  (void)node;
  return {
      {"apiVersion", kResourceApi}, {"kind", "ResourceSlice"}, {"metadata", meta}, {"spec", spec}};
}

J poolOf(const NodeState& node) {
  return {{"name", node.name},
          {"generation", node.generation},
          {"resourceSliceCount", 1 + kGpusPerNode}};
}

}  // namespace

std::string gpuDeviceName(int gpu) { return "gpu-" + std::to_string(gpu); }
std::string migDeviceName(int gpu, int slot) {
  return "gpu-" + std::to_string(gpu) + "-mig-1g5gb-" + std::to_string(slot);
}

J deviceClassObject(const char* name, const char* deviceType, const std::string& uid,
                    std::int64_t createdNs, const std::string& rv) {
  const std::string expr = "device.driver == '" + std::string(kDriver) +
                           "' && device.attributes['" + kDriver + "'].type == '" + deviceType + "'";
  J spec = {{"selectors", J::array({{{"cel", {{"expression", expr}}}}})}};
  J meta = {{"name", name},
            {"uid", uid},
            {"resourceVersion", rv},
            {"generation", 1},
            {"creationTimestamp", rfc3339(createdNs)}};
  meta["managedFields"] =
      J::array({managedEntry("helm", "Update", kResourceApi, createdNs, {{"spec", spec}})});
  return {
      {"apiVersion", kResourceApi}, {"kind", "DeviceClass"}, {"metadata", meta}, {"spec", spec}};
}

J claimTemplateObject(const QueueState& q, const char* name, const char* deviceClass, int count,
                      const std::string& uid, const std::string& rv) {
  J exactly = {
      {"deviceClassName", deviceClass}, {"allocationMode", "ExactCount"}, {"count", count}};
  J devices = {{"requests", J::array({{{"name", "gpu"}, {"exactly", exactly}}})},
               {"config", J::array({gpuConfig(std::string(deviceClass) == kMigClass)})}};
  J spec = {{"spec", {{"devices", devices}}}};
  J meta = {{"name", name},
            {"namespace", q.ns},
            {"uid", uid},
            {"resourceVersion", rv},
            {"creationTimestamp", rfc3339(q.createdNs)}};
  meta["managedFields"] = J::array({managedEntry("kubectl-client-side-apply", "Update",
                                                 kResourceApi, q.createdNs, {{"spec", spec}})});
  return {{"apiVersion", kResourceApi},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", meta},
          {"spec", spec}};
}

J counterSliceObject(const NodeState& node, const std::string& rv, std::int64_t nowNs) {
  J sets = J::array();
  for (int g = 0; g < kGpusPerNode; ++g) {
    sets.push_back({{"name", counterSet(g)}, {"counters", counters(true)}});
  }
  J spec = {{"driver", kDriver},
            {"nodeName", node.name},
            {"pool", poolOf(node)},
            {"sharedCounters", sets}};
  return slice(node, sliceMeta(node, node.name + "-gpu-counters", node.sliceUids[0], rv), spec,
               nowNs);
}

J deviceSliceObject(const NodeState& node, int gpu, const std::string& rv, std::int64_t nowNs) {
  J devices = J::array();
  const std::string uuid = gpuUuid(node, gpu);
  J whole = {{"name", gpuDeviceName(gpu)},
             {"attributes",
              {{"type", {{"string", "gpu"}}},
               {"uuid", {{"string", uuid}}},
               {"productName", {{"string", "NVIDIA A100-SXM4-40GB"}}},
               {"brand", {{"string", "Nvidia"}}},
               {"architecture", {{"string", "Ampere"}}},
               {"cudaComputeCapability", {{"version", "8.0.0"}}},
               {"driverVersion", {{"version", "550.54.15"}}},
               {"cudaDriverVersion", {{"version", "12.4.0"}}},
               {"index", {{"int", gpu}}},
               {"pcieBusID", {{"string", "0000:" + std::to_string(10 + gpu) + ":00.0"}}}}},
             {"capacity", {{"memory", {{"value", memQuantity(kGpuMemoryMi)}}}}},
             {"consumesCounters",
              J::array({{{"counterSet", counterSet(gpu)}, {"counters", counters(true)}}})}};
  devices.push_back(whole);
  for (int s = 0; s < kMigPerGpu; ++s) {
    devices.push_back({{"name", migDeviceName(gpu, s)},
                       {"attributes",
                        {{"type", {{"string", "mig"}}},
                         {"profile", {{"string", "1g.5gb"}}},
                         {"parentUUID", {{"string", uuid}}},
                         {"parentIndex", {{"int", gpu}}},
                         {"index", {{"int", s}}},
                         {"productName", {{"string", "NVIDIA A100-SXM4-40GB"}}},
                         {"driverVersion", {{"version", "550.54.15"}}}}},
                       {"capacity", {{"memory", {{"value", memQuantity(kMigMemoryMi)}}}}},
                       {"consumesCounters", J::array({{{"counterSet", counterSet(gpu)},
                                                       {"counters", counters(false)}}})}});
  }
  J spec = {
      {"driver", kDriver}, {"nodeName", node.name}, {"pool", poolOf(node)}, {"devices", devices}};
  return slice(node,
               sliceMeta(node, node.name + "-gpu-" + std::to_string(gpu),
                         node.sliceUids[static_cast<std::size_t>(1 + gpu)], rv),
               spec, nowNs);
}

J resourceClaimObject(const Job& job, const PodRun& run, const NodeState& node, bool allocated,
                      const std::string& rv, std::int64_t nowNs) {
  const bool mig = job.shape == JobShape::kMig;
  J exactly = {{"deviceClassName", mig ? kMigClass : kGpuClass},
               {"allocationMode", "ExactCount"},
               {"count", job.devicesPerPod()}};
  J spec = {{"devices",
             {{"requests", J::array({{{"name", "gpu"}, {"exactly", exactly}}})},
              {"config", J::array({gpuConfig(mig)})}}}};
  J meta = {{"name", run.claimName},
            {"generateName", run.name + "-gpu-"},
            {"namespace", job.ns},
            {"uid", run.claimUid},
            {"resourceVersion", rv},
            {"creationTimestamp", rfc3339(run.createdNs)},
            {"annotations", {{"resource.kubernetes.io/pod-claim-name", "gpu"}}},
            {"ownerReferences", J::array({{{"apiVersion", "v1"},
                                           {"kind", "Pod"},
                                           {"name", run.name},
                                           {"uid", run.uid},
                                           {"controller", true},
                                           {"blockOwnerDeletion", true}}})}};
  J managed = J::array();
  managed.push_back(managedEntry("kube-controller-manager", "Update", kResourceApi, run.createdNs,
                                 {{"metadata", ownedMetadata(meta)}, {"spec", spec}}));
  J status = J::object();
  if (allocated) {
    meta["finalizers"] = J::array({"resource.kubernetes.io/delete-protection"});
    J results = J::array();
    for (const Slot& s : run.slots) {
      results.push_back(
          {{"request", "gpu"},
           {"driver", kDriver},
           {"pool", node.name},
           {"device", s.mig < 0 ? gpuDeviceName(s.gpu) : migDeviceName(s.gpu, s.mig)}});
    }
    J selector = {{"nodeSelectorTerms",
                   J::array({{{"matchFields", J::array({{{"key", "metadata.name"},
                                                         {"operator", "In"},
                                                         {"values", J::array({node.name})}}})}}})}};
    J config = gpuConfig(mig);
    config["source"] = "FromClaim";
    status["allocation"] = {{"devices", {{"results", results}, {"config", J::array({config})}}},
                            {"nodeSelector", selector}};
    status["reservedFor"] =
        J::array({{{"resource", "pods"}, {"name", run.name}, {"uid", run.uid}}});
    managed.push_back(managedEntry("kube-scheduler", "Update", kResourceApi, nowNs,
                                   {{"status", status}}, "status"));
  }
  meta["managedFields"] = std::move(managed);
  J out = {
      {"apiVersion", kResourceApi}, {"kind", "ResourceClaim"}, {"metadata", meta}, {"spec", spec}};
  if (allocated) out["status"] = status;
  return out;
}

}  // namespace ledger::gen
