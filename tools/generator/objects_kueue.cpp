// Kueue objects (kueue.x-k8s.io/v1beta2) and the DRA quota configuration
// (the OpenShift Kueue CR named "cluster").
#include "tools/generator/objects.h"

namespace ledger::gen {

namespace {

constexpr const char* kResources[] = {"cpu", "memory", "nvidia.com/gpu", "gpu.memory"};

std::string amount(const FlavorUsage& u, int resource) {
  switch (resource) {
    case 0:
      return cpuQuantity(u.cpuMilli);
    case 1:
      return memQuantity(u.memoryMi);
    case 2:
      return std::to_string(u.gpus);
    default:
      return memQuantity(u.gpuMemoryMi);
  }
}

J workloadCondition(const char* type, const char* status, const char* reason,
                    const std::string& message, std::int64_t ns, std::int64_t generation) {
  return {{"type", type},
          {"status", status},
          {"observedGeneration", generation},
          {"lastTransitionTime", rfc3339(ns)},
          {"reason", reason},
          {"message", message}};
}

J flavorUsageList(const QueueState& q) {
  J list = J::array();
  for (int f = 0; f < kFlavorCount; ++f) {
    J resources = J::array();
    for (int r = 0; r < 4; ++r) {
      resources.push_back(
          {{"name", kResources[r]}, {"total", amount(q.reserved[f], r)}, {"borrowed", "0"}});
    }
    list.push_back({{"name", kFlavors[f]}, {"resources", resources}});
  }
  return list;
}

J workloadStatus(const Job& job, const QueueState& q) {
  J status = J::object();
  J conds = J::array();
  const auto g = job.generation;
  if (job.phase == JobPhase::kPending) {
    if (job.evictions > 0) {
      conds.push_back(workloadCondition("Evicted", "True", "Preempted",
                                        "Preempted to accommodate a workload in the cohort",
                                        job.evictedNs, g));
      conds.push_back(workloadCondition("QuotaReserved", "False", "Pending",
                                        "The workload was evicted and requeued", job.evictedNs, g));
      conds.push_back(workloadCondition("Requeued", "True", "Preempted",
                                        "Requeued after preemption", job.evictedNs, g));
    } else if (job.inadmissibleSeen) {
      conds.push_back(
          workloadCondition("QuotaReserved", "False", "Pending",
                            "couldn't assign flavors to pod set main: insufficient unused "
                            "quota in cluster queue " +
                                q.name,
                            job.createdNs, g));
    }
  } else {
    conds.push_back(workloadCondition("QuotaReserved", "True", "QuotaReserved",
                                      "Quota reserved in ClusterQueue " + q.name, job.reservedNs,
                                      g));
    conds.push_back(workloadCondition("Admitted", "True", "Admitted", "The workload is admitted",
                                      job.reservedNs, g));
    if (job.phase == JobPhase::kRunning) {
      conds.push_back(workloadCondition("PodsReady", "True", "PodsReady",
                                        "All pods reached readiness and the workload is running",
                                        job.podsReadyNs, g));
    }
    if (job.phase == JobPhase::kFinished) {
      conds.push_back(workloadCondition("Finished", "True", "Succeeded",
                                        "Job finished successfully", job.finishedNs, g));
    }
    const FlavorUsage per = job.perPod();
    J flavors = J::object(), usage = J::object();
    for (int r = 0; r < 4; ++r) {
      if ((r == 2 && per.gpus == 0) || (r == 3 && per.gpuMemoryMi == 0)) continue;
      FlavorUsage total{per.cpuMilli * job.pods, per.memoryMi * job.pods, per.gpus * job.pods,
                        per.gpuMemoryMi * job.pods};
      flavors[kResources[r]] = kFlavors[job.flavor];
      usage[kResources[r]] = amount(total, r);
    }
    status["admission"] = {{"clusterQueue", q.name},
                           {"podSetAssignments", J::array({{{"name", "main"},
                                                            {"flavors", flavors},
                                                            {"resourceUsage", usage},
                                                            {"count", job.pods}}})}};
  }
  if (!conds.empty()) status["conditions"] = conds;
  const FlavorUsage per = job.perPod();
  J requests = {{"cpu", cpuQuantity(per.cpuMilli)}, {"memory", memQuantity(per.memoryMi)}};
  status["resourceRequests"] = J::array({{{"name", "main"}, {"resources", requests}}});
  return status;
}

}  // namespace

J kueueConfigObject(const std::string& uid, std::int64_t createdNs, const std::string& rv) {
  J mappings = J::array();
  mappings.push_back({{"name", "nvidia.com/gpu"}, {"deviceClassNames", J::array({kGpuClass})}});
  J counter = {{"name", "memory"}, {"driver", kDriver}};
  mappings.push_back({{"name", "gpu.memory"},
                      {"deviceClassNames", J::array({kMigClass})},
                      {"sources", J::array({{{"type", "Counter"}, {"counter", counter}}})}});
  J spec = {{"managementState", "Managed"},
            {"config",
             {{"integrations", {{"frameworks", J::array({"BatchJob", "Pod"})}}},
              {"queueing", {{"queueingStrategy", "BestEffortFIFO"}}},
              {"resources", {{"deviceClassMappings", mappings}}}}}};
  J meta = {{"name", "cluster"},
            {"uid", uid},
            {"resourceVersion", rv},
            {"generation", 1},
            {"creationTimestamp", rfc3339(createdNs)}};
  meta["managedFields"] =
      J::array({managedEntry("kubectl-client-side-apply", "Update", "kueue.openshift.io/v1",
                             createdNs, {{"spec", spec}})});
  return {{"apiVersion", "kueue.openshift.io/v1"},
          {"kind", "Kueue"},
          {"metadata", meta},
          {"spec", spec}};
}

J resourceFlavorObject(int flavor, const std::string& uid, std::int64_t createdNs,
                       const std::string& rv) {
  J spec = {{"nodeLabels", {{"cloud.example.com/capacity-type", kFlavors[flavor]}}}};
  if (flavor == 1) {
    spec["nodeTaints"] = J::array(
        {{{"key", "cloud.example.com/spot"}, {"value", "true"}, {"effect", "NoSchedule"}}});
    spec["tolerations"] = J::array(
        {{{"key", "cloud.example.com/spot"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  }
  J meta = {{"name", kFlavors[flavor]},
            {"uid", uid},
            {"resourceVersion", rv},
            {"generation", 1},
            {"creationTimestamp", rfc3339(createdNs)},
            {"finalizers", J::array({"kueue.x-k8s.io/resource-in-use"})}};
  meta["managedFields"] = J::array({managedEntry("kubectl-client-side-apply", "Update", kKueueApi,
                                                 createdNs, {{"spec", spec}})});
  return {
      {"apiVersion", kKueueApi}, {"kind", "ResourceFlavor"}, {"metadata", meta}, {"spec", spec}};
}

std::string clusterQueueObject(const QueueState& q, const std::string& rv, std::int64_t nowNs) {
  if (q.specRaw.empty()) {
    J flavors = J::array();
    for (int f = 0; f < kFlavorCount; ++f) {
      J resources = J::array();
      for (int r = 0; r < 4; ++r) {
        J quota = {{"name", kResources[r]}, {"nominalQuota", amount(q.quota, r)}};
        if (r >= 2) quota["lendingLimit"] = amount(q.quota, r);
        resources.push_back(quota);
      }
      flavors.push_back({{"name", kFlavors[f]}, {"resources", resources}});
    }
    J group = {{"coveredResources", kResources}, {"flavors", flavors}};
    J spec = {{"cohortName", q.cohort},
              {"namespaceSelector", J::object()},
              {"queueingStrategy", "BestEffortFIFO"},
              {"stopPolicy", "None"},
              {"flavorFungibility",
               {{"whenCanBorrow", "MayStopSearch"}, {"whenCanPreempt", "TryNextFlavor"}}},
              {"preemption",
               {{"borrowWithinCohort", {{"policy", "Never"}}},
                {"reclaimWithinCohort", "Any"},
                {"withinClusterQueue", "LowerPriority"}}},
              {"resourceGroups", J::array({group})}};
    q.specRaw = spec.dump();
    q.specEntryRaw = managedEntry("kubectl-client-side-apply", "Update", kKueueApi, q.createdNs,
                                  {{"spec", spec}})
                         .dump();
  }
  J meta = {{"name", q.name},
            {"uid", q.uid},
            {"resourceVersion", rv},
            {"generation", 1},
            {"creationTimestamp", rfc3339(q.createdNs)},
            {"finalizers", J::array({"kueue.x-k8s.io/resource-in-use"})}};
  J status = {
      {"pendingWorkloads", q.pending},
      {"reservingWorkloads", q.reserving},
      {"admittedWorkloads", q.admitted},
      {"flavorsReservation", flavorUsageList(q)},
      {"flavorsUsage", flavorUsageList(q)},
      {"conditions", J::array({workloadCondition("Active", "True", "Ready",
                                                 "Can admit new workloads", q.createdNs, 1)})}};
  meta["managedFields"] =
      J::array({rawSlot(0), managedEntry("kueue-admission", "Apply", kKueueApi, nowNs,
                                         {{"status", status}}, "status")});
  J cq = {{"apiVersion", kKueueApi},
          {"kind", "ClusterQueue"},
          {"metadata", std::move(meta)},
          {"spec", rawSlot(1)},
          {"status", std::move(status)}};
  return dumpWithRaw(cq, {&q.specEntryRaw, &q.specRaw});
}

J localQueueObject(const QueueState& q, const std::string& rv) {
  J spec = {{"clusterQueue", q.name}, {"stopPolicy", "None"}};
  J meta = {{"name", "user-queue"}, {"namespace", q.ns},
            {"uid", q.lqUid},       {"resourceVersion", rv},
            {"generation", 1},      {"creationTimestamp", rfc3339(q.createdNs)}};
  meta["managedFields"] = J::array({managedEntry("kubectl-client-side-apply", "Update", kKueueApi,
                                                 q.createdNs, {{"spec", spec}})});
  return {{"apiVersion", kKueueApi}, {"kind", "LocalQueue"}, {"metadata", meta}, {"spec", spec}};
}

std::string workloadObject(const Job& job, const QueueState& q, const std::string& rv,
                           std::int64_t nowNs) {
  J meta = {{"name", job.name},
            {"namespace", job.ns},
            {"uid", job.uid},
            {"resourceVersion", rv},
            {"generation", job.generation},
            {"creationTimestamp", rfc3339(job.createdNs)},
            {"labels", {{"kueue.x-k8s.io/job-uid", job.jobUid}}},
            {"ownerReferences", J::array({{{"apiVersion", "batch/v1"},
                                           {"kind", "Job"},
                                           {"name", job.jobName},
                                           {"uid", job.jobUid},
                                           {"controller", true},
                                           {"blockOwnerDeletion", true}}})}};
  if (job.specRaw.empty()) {
    J podSet = {
        {"name", "main"},
        {"count", job.pods},
        {"template",
         {{"metadata",
           {{"labels",
             {{"batch.kubernetes.io/job-name", job.jobName}, {"kueue.x-k8s.io/podset", "main"}}}}},
          {"spec", podTemplateSpec(job)}}}};
    J spec = {{"active", true},
              {"podSets", J::array({std::move(podSet)})},
              {"priority", job.priority},
              {"priorityClassSource", ""},
              {"queueName", "user-queue"}};
    job.specEntryRaw = managedEntry("kueue-controller-manager", "Update", kKueueApi, job.createdNs,
                                    {{"metadata", ownedMetadata(meta)}, {"spec", spec}})
                           .dump();
    job.specRaw = spec.dump();
  }
  if (job.phase != JobPhase::kPending) {
    meta["finalizers"] = J::array({"kueue.x-k8s.io/resource-in-use"});
  }
  J status = workloadStatus(job, q);
  J managed = J::array({rawSlot(0)});
  if (status.contains("conditions")) {
    managed.push_back(
        managedEntry("kueue-admission", "Apply", kKueueApi, nowNs, {{"status", status}}, "status"));
  }
  meta["managedFields"] = std::move(managed);
  J wl = {{"apiVersion", kKueueApi},
          {"kind", "Workload"},
          {"metadata", std::move(meta)},
          {"spec", rawSlot(1)},
          {"status", std::move(status)}};
  return dumpWithRaw(wl, {&job.specEntryRaw, &job.specRaw});
}

}  // namespace ledger::gen
