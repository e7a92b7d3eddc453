// core/v1 objects: Namespaces and the Pods of admitted workloads.
#include "tools/generator/objects.h"

namespace ledger::gen {

namespace {

J container(const Job& job) {
  J requests = {{"cpu", cpuQuantity(job.cpuMilli)}, {"memory", memQuantity(job.memoryMi)}};
  J limits = {{"memory", memQuantity(job.memoryMi)}};
  J resources = {{"requests", requests}, {"limits", limits}};
  if (job.shape != JobShape::kCpuOnly) resources["claims"] = J::array({{{"name", "gpu"}}});
  J env = J::array();
  env.push_back({{"name", "NCCL_DEBUG"}, {"value", "WARN"}});
  env.push_back({{"name", "NCCL_SOCKET_IFNAME"}, {"value", "eth0"}});
  env.push_back({{"name", "JOB_NAME"}, {"value", job.jobName}});
  env.push_back({{"name", "MASTER_ADDR"}, {"value", job.jobName + "-0." + job.jobName}});
  env.push_back({{"name", "MASTER_PORT"}, {"value", "29500"}});
  env.push_back({{"name", "WORLD_SIZE"}, {"value", std::to_string(job.pods)}});
  env.push_back(
      {{"name", "POD_NAME"},
       {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.name"}}}}}});
  J mounts = J::array();
  mounts.push_back({{"name", "data"}, {"mountPath", "/data"}, {"readOnly", true}});
  mounts.push_back({{"name", "dshm"}, {"mountPath", "/dev/shm"}});
  return {{"name", "trainer"},
          {"image", job.image},
          {"command", {"python", "-m", "torch.distributed.run"}},
          {"args",
           {"--nproc-per-node=auto", "--nnodes=" + std::to_string(job.pods), "train.py",
            "--epochs=90", "--batch-size=256", "--data=/data/imagenet"}},
          {"env", env},
          {"resources", resources},
          {"volumeMounts", mounts},
          {"terminationMessagePath", "/dev/termination-log"},
          {"terminationMessagePolicy", "File"},
          {"imagePullPolicy", "IfNotPresent"}};
}

J volumes() {
  J v = J::array();
  v.push_back({{"name", "data"},
               {"persistentVolumeClaim", {{"claimName", "imagenet"}, {"readOnly", true}}}});
  v.push_back({{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "16Gi"}}}});
  return v;
}

// What the API server adds to every pod: the projected service account token.
J apiAccessVolume(const std::string& podName) {
  J sources = J::array();
  sources.push_back({{"serviceAccountToken", {{"expirationSeconds", 3607}, {"path", "token"}}}});
  sources.push_back(
      {{"configMap",
        {{"name", "kube-root-ca.crt"}, {"items", {{{"key", "ca.crt"}, {"path", "ca.crt"}}}}}}});
  sources.push_back(
      {{"downwardAPI",
        {{"items",
          {{{"path", "namespace"},
            {"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.namespace"}}}}}}}}});
  return {{"name", "kube-api-access-" + podName.substr(podName.size() - 5)},
          {"projected", {{"sources", sources}, {"defaultMode", 420}}}};
}

J podCondition(const char* type, const char* status, std::int64_t ns) {
  return {{"type", type},
          {"status", status},
          {"lastProbeTime", nullptr},
          {"lastTransitionTime", rfc3339(ns)}};
}

}  // namespace

J namespaceObject(const QueueState& q, const std::string& rv) {
  J meta = {{"name", q.ns},
            {"uid", q.nsUid},
            {"resourceVersion", rv},
            {"creationTimestamp", rfc3339(q.createdNs)},
            {"labels",
             {{"kubernetes.io/metadata.name", q.ns},
              {"kueue.openshift.io/managed", "true"},
              {"team", q.name}}}};
  meta["managedFields"] = J::array({managedEntry("kubectl-create", "Update", "v1", q.createdNs,
                                                 {{"metadata", ownedMetadata(meta)}})});
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", meta},
          {"spec", {{"finalizers", J::array({"kubernetes"})}}},
          {"status", {{"phase", "Active"}}}};
}

J podTemplateSpec(const Job& job) {
  J spec = {{"containers", J::array({container(job)})}, {"volumes", volumes()}};
  if (job.shape != JobShape::kCpuOnly) {
    spec["resourceClaims"] =
        J::array({{{"name", "gpu"}, {"resourceClaimTemplateName", job.claimTemplate()}}});
  }
  spec["restartPolicy"] = "Never";
  spec["terminationGracePeriodSeconds"] = 30;
  return spec;
}

std::string podObject(const Job& job, const PodRun& run, int index, const NodeState& node,
                      const char* phase, const std::string& rv, std::int64_t nowNs) {
  J meta = {{"name", run.name},
            {"generateName", job.jobName + "-" + std::to_string(index) + "-"},
            {"namespace", job.ns},
            {"uid", run.uid},
            {"resourceVersion", rv},
            {"creationTimestamp", rfc3339(run.createdNs)},
            {"labels",
             {{"batch.kubernetes.io/controller-uid", job.jobUid},
              {"batch.kubernetes.io/job-completion-index", std::to_string(index)},
              {"batch.kubernetes.io/job-name", job.jobName},
              {"controller-uid", job.jobUid},
              {"job-name", job.jobName},
              {"kueue.x-k8s.io/podset", "main"}}},
            {"annotations",
             {{"batch.kubernetes.io/job-completion-index", std::to_string(index)},
              {"kueue.x-k8s.io/workload", job.name}}},
            {"ownerReferences", J::array({{{"apiVersion", "batch/v1"},
                                           {"kind", "Job"},
                                           {"name", job.jobName},
                                           {"uid", job.jobUid},
                                           {"controller", true},
                                           {"blockOwnerDeletion", true}}})},
            {"finalizers", J::array({"batch.kubernetes.io/job-tracking"})}};
  if (run.specRaw.empty()) {
    J spec = podTemplateSpec(job);
    run.specEntryRaw = managedEntry("kube-controller-manager", "Update", "v1", run.createdNs,
                                    {{"metadata", ownedMetadata(meta)}, {"spec", spec}})
                           .dump();
    const J access = apiAccessVolume(run.name);
    spec["containers"][0]["volumeMounts"].push_back(
        {{"name", access["name"]},
         {"readOnly", true},
         {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}});
    spec["volumes"].push_back(access);
    spec["nodeName"] = node.name;
    spec["nodeSelector"] = {{"cloud.example.com/capacity-type", kFlavors[node.flavor]}};
    spec["schedulerName"] = "default-scheduler";
    spec["serviceAccountName"] = "default";
    spec["dnsPolicy"] = "ClusterFirst";
    spec["enableServiceLinks"] = true;
    spec["preemptionPolicy"] = "PreemptLowerPriority";
    spec["priority"] = job.priority;
    spec["securityContext"] = J::object();
    spec["tolerations"] = J::array({{{"key", "node.kubernetes.io/not-ready"},
                                     {"operator", "Exists"},
                                     {"effect", "NoExecute"},
                                     {"tolerationSeconds", 300}},
                                    {{"key", "node.kubernetes.io/unreachable"},
                                     {"operator", "Exists"},
                                     {"effect", "NoExecute"},
                                     {"tolerationSeconds", 300}}});
    run.specRaw = spec.dump();
  }
  const std::string p = phase;
  const bool started = p != "Pending";
  J conditions = J::array();
  conditions.push_back(
      podCondition("PodReadyToStartContainers", started ? "True" : "False", run.startedNs));
  conditions.push_back(podCondition("Initialized", "True", run.createdNs));
  conditions.push_back(podCondition("Ready", p == "Running" ? "True" : "False", nowNs));
  conditions.push_back(podCondition("ContainersReady", p == "Running" ? "True" : "False", nowNs));
  conditions.push_back(podCondition("PodScheduled", "True", run.createdNs));
  const std::string containerId = "containerd://" + run.uid + run.uid;
  J state;
  if (p == "Pending") {
    state = {{"waiting", {{"reason", "ContainerCreating"}}}};
  } else if (p == "Running") {
    state = {{"running", {{"startedAt", rfc3339(run.startedNs)}}}};
  } else {
    state = {{"terminated",
              {{"exitCode", p == "Succeeded" ? 0 : 137},
               {"reason", p == "Succeeded" ? "Completed" : "Error"},
               {"startedAt", rfc3339(run.startedNs)},
               {"finishedAt", rfc3339(nowNs)},
               {"containerID", containerId}}}};
  }
  J cstatus = {{"name", "trainer"},
               {"state", std::move(state)},
               {"lastState", J::object()},
               {"ready", p == "Running"},
               {"restartCount", 0},
               {"image", job.image},
               {"imageID", job.image + "@sha256:" + job.jobUid + job.jobUid},
               {"containerID", containerId},
               {"started", p == "Running"}};
  J status = {{"phase", phase},
              {"conditions", std::move(conditions)},
              {"hostIP", node.ip},
              {"hostIPs", J::array({{{"ip", node.ip}}})},
              {"podIP", run.ip},
              {"podIPs", J::array({{{"ip", run.ip}}})},
              {"startTime", rfc3339(run.createdNs)},
              {"containerStatuses", J::array({std::move(cstatus)})},
              {"qosClass", "Burstable"}};
  if (job.shape != JobShape::kCpuOnly && started) {
    status["resourceClaimStatuses"] =
        J::array({{{"name", "gpu"}, {"resourceClaimName", run.claimName}}});
  }
  meta["managedFields"] = J::array(
      {rawSlot(0), managedEntry("kubelet", "Update", "v1", nowNs, {{"status", status}}, "status")});
  J pod = {{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata", std::move(meta)},
           {"spec", rawSlot(1)},
           {"status", std::move(status)}};
  return dumpWithRaw(pod, {&run.specEntryRaw, &run.specRaw});
}

}  // namespace ledger::gen
