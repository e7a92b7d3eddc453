// A Workload to evaluate, read from a manifest file (YAML documents or JSON
// values, every one of them): exactly one kueue.x-k8s.io Workload (v1beta1
// or v1beta2) as is, or a batch/v1 Job turned into the Workload Kueue's job
// integration would create (pkg/controller/jobs/job/job_controller.go
// Job.PodSets): one pod set `main` with the Job's pod template and
// count = parallelism (default 1), capped by completions when smaller;
// spec.queueName from the `kueue.x-k8s.io/queue-name` label (or the older
// annotation); the Workload is named "job-<job name>" (Kueue appends a hash
// of the Job's uid, which a manifest does not have) in the Job's namespace
// ("default" when absent, as `kubectl apply` in the default context). A Job
// or Workload with only metadata.generateName is named after it without its
// trailing '-' (the API server would append a random suffix). Priority is
// spec.priority for a Workload and 0 for a Job (priority classes are not in
// the ledger).
//
// A manifest often carries what the workload needs beside it, as Kueue's own
// sample site/static/examples/dra/sample-dra-rct-job.yaml does (a
// ResourceClaimTemplate, then the Job naming it). ResourceClaimTemplates
// ("default" namespace when absent) and DeviceClasses in the file are kept
// and, with addManifestObjects, stand in the state as if they existed in the
// cluster at the asked moment: `kubectl apply -f` of the file would create
// them with the Job. Other kinds in the file are listed as ignored.
//
// The objects are projected with ingest's projector, so they are read exactly
// as ingested objects would be.
//
// Value types; thread-compatible. Errors: loadWorkloadManifest throws
// std::runtime_error naming the file and the reason (unreadable, a document
// that does not parse, no Workload or Job, more than one, a Job without the
// queue-name label).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster_state.h"

namespace ledger::replay::admission {

// The Workload JSON Kueue would create for a batch/v1 Job. Throws
// std::runtime_error when the Job names no queue.
nlohmann::json workloadForJob(const nlohmann::json& job);

struct WorkloadManifest {
  // The Workload (or converted Job) as a projected object: ns(), name() and
  // projection().getBody().getWorkload() are what to evaluate.
  std::unique_ptr<StoredObject> workload;
  // The file's ResourceClaimTemplates and DeviceClasses, in file order, with
  // a template's namespace filled in.
  std::vector<nlohmann::json> clusterObjects;
  // "Kind namespace/name" of the file's other objects, which play no part.
  std::vector<std::string> ignored;
};

WorkloadManifest loadWorkloadManifest(const std::string& path);

// Folds `objects` (WorkloadManifest::clusterObjects) into `state` as upserts
// at its moment: its seq and time stay, a same-named object is replaced.
// Returns one line per object saying so, for the report's warnings.
std::vector<std::string> addManifestObjects(ClusterState& state,
                                            const std::vector<nlohmann::json>& objects);

// The same from an already parsed object (tests, other callers).
std::unique_ptr<StoredObject> workloadObject(nlohmann::json object);

}  // namespace ledger::replay::admission
