// `ledger-query admit`: would a workload fit its ClusterQueue at a moment
// (docs/reference.md "ledger-query"):
//   admit NAMESPACE/NAME [--at TIME | --seq N]   a Workload in the ledger
//   admit --workload FILE [--at TIME | --seq N]  a Workload (or batch/v1 Job
//                                                 with the queue-name label) manifest;
//                                                 the ResourceClaimTemplates and
//                                                 DeviceClasses in the same file count
//                                                 as existing at that moment
//                                                 (ingest/workload_manifest.h), each named in
//                                                 the report's warnings
// The moment defaults to the end of the log. Prints the admission report
// (replay/admission/admission_report.h) as JSON or a table.
//
// Errors: throws UsageError for bad arguments, an unreadable or unsuitable
// manifest, or a workload that does not exist at that moment; ReplayError
// when the ledger cannot be folded. Not thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "replay/fold/cluster_state.h"
#include "tools/query_commands.h"

namespace ledger::cli {

int runAdmit(const Ledger& ledger, const QueryArgs& args, std::ostream& out);

// Folds a manifest's ResourceClaimTemplates and DeviceClasses
// (ingest::WorkloadManifest::clusterObjects) into `state` as upserts at its
// moment: its seq and time stay, a same-named object is replaced. Returns one
// line per object saying so, for the report's warnings.
std::vector<std::string> addManifestObjects(replay::ClusterState& state,
                                            const std::vector<nlohmann::json>& objects);

}  // namespace ledger::cli
