// A Workload to evaluate, read from a manifest file (YAML or JSON, the first
// document/value that is an object): a kueue.x-k8s.io Workload (v1beta1 or
// v1beta2) as is, or a batch/v1 Job turned into the Workload Kueue's job
// integration would create (pkg/controller/jobs/job/job_controller.go
// Job.PodSets): one pod set `main` with the Job's pod template and
// count = parallelism (default 1), capped by completions when smaller;
// spec.queueName from the `kueue.x-k8s.io/queue-name` label (or the older
// annotation); the Workload is named "job-<job name>" (Kueue appends a hash
// of the Job's uid, which a manifest does not have) in the Job's namespace
// ("default" when absent). Priority is spec.priority for a Workload and 0 for
// a Job (priority classes are not in the ledger).
//
// The object is projected with ingest's projector, so it is read exactly as an
// ingested object would be.
//
// Value types; thread-compatible. Errors: loadWorkloadManifest throws
// std::runtime_error naming the file and the reason (unreadable, no object,
// another kind, a Job without the queue-name label).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster_state.h"

namespace ledger::replay::admission {

// The Workload JSON Kueue would create for a batch/v1 Job. Throws
// std::runtime_error when the Job names no queue.
nlohmann::json workloadForJob(const nlohmann::json& job);

// The Workload (or converted Job) in `path` as a projected object: ns(),
// name() and projection().getBody().getWorkload() are what to evaluate.
std::unique_ptr<StoredObject> loadWorkloadManifest(const std::string& path);

// The same from an already parsed object (tests, other callers).
std::unique_ptr<StoredObject> workloadObject(nlohmann::json object);

}  // namespace ledger::replay::admission
