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
// ("default" namespace when absent) and DeviceClasses in the file are kept;
// `ledger-query admit` folds them into the state as if they existed in the
// cluster at the asked moment: `kubectl apply -f` of the file would create
// them with the Job. Other kinds in the file are listed as ignored.
//
// The objects are projected with the projector (projector.h) into records
// shaped as the ledger stores them (schema::ProjectedRecord words), so the
// replay reads them exactly as ingested objects.
//
// Value types; thread-compatible. Errors: loadWorkloadManifest throws
// std::runtime_error naming the file and the reason (unreadable, a document
// that does not parse, no Workload or Job, more than one, a Job without the
// queue-name label).
#pragma once

#include <capnp/common.h>
#include <kj/array.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ledger::ingest {

// The Workload JSON Kueue would create for a batch/v1 Job. Throws
// std::runtime_error when the Job names no queue.
nlohmann::json workloadForJob(const nlohmann::json& job);

struct WorkloadManifest {
  // The Workload (or converted Job) as a projected record at seq 0, and
  // where it lives.
  kj::Array<capnp::word> workloadRecord;
  std::string ns, name;
  // The file's ResourceClaimTemplates and DeviceClasses, in file order, with
  // a template's namespace filled in.
  std::vector<nlohmann::json> clusterObjects;
  // "Kind namespace/name" of the file's other objects, which play no part.
  std::vector<std::string> ignored;
};

WorkloadManifest loadWorkloadManifest(const std::string& path);

// The projected record of a Workload or batch/v1 Job given as an object, at
// seq 0 (tests, other callers). Throws std::runtime_error for another kind.
kj::Array<capnp::word> workloadRecord(nlohmann::json object);

// The record of one of WorkloadManifest::clusterObjects as a MODIFIED event
// observed at (seq, timeNs), ready for the fold's apply.
kj::Array<capnp::word> clusterObjectRecord(const nlohmann::json& object, std::uint64_t seq,
                                           std::int64_t timeNs);

// "Kind namespace/name" of a manifest object, for messages.
std::string describeManifestObject(const nlohmann::json& object);

}  // namespace ledger::ingest
