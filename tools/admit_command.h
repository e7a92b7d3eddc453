// `ledger-query admit`: would a workload fit its ClusterQueue at a moment
// (CONTRACT.md "ledger-query"):
//   admit NAMESPACE/NAME [--at TIME | --seq N]   a Workload in the ledger
//   admit --workload FILE [--at TIME | --seq N]  a Workload (or batch/v1 Job
//                                                 with the queue-name label) manifest;
//                                                 the ResourceClaimTemplates and
//                                                 DeviceClasses in the same file count
//                                                 as existing at that moment
//                                                 (workload_manifest.h), each named in
//                                                 the report's warnings
// The moment defaults to the end of the log. Prints the admission report
// (replay/admission/admission_report.h) as JSON or a table.
//
// Errors: throws UsageError for bad arguments, an unreadable or unsuitable
// manifest, or a workload that does not exist at that moment; ReplayError
// when the ledger cannot be folded. Not thread-safe.
#pragma once

#include <ostream>

#include "query_commands.h"

namespace ledger::cli {

int runAdmit(const Ledger& ledger, const QueryArgs& args, std::ostream& out);

}  // namespace ledger::cli
