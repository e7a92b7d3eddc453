// The ledger's own answers, in two forms:
// - as Kubernetes resources of the group kLedgerGroup (resource_catalog.h),
//   so kubectl lists them at a moment: QueueUsage (one per ClusterQueue: its
//   quota rows from the state report), LedgerFinding (the findings open at
//   the moment), WorkloadHistory (per Workload; a get carries the
//   workload command's history) and WorkloadWhy (per Workload: the why
//   command's timeline and its summary, workload_whys.h);
// - as the JSON the web view reads, under /ledger/v1/: range, state, usage,
//   report, workload, why (the ledger-query commands' JSON,
//   docs/reference.md).
//
// Thread-safe (reads only). Errors: throw ApiError.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "tools/serve/api_request.h"
#include "tools/serve/moment.h"
#include "tools/serve/serve_context.h"

namespace ledger::serve {

// The objects of one of the ledger's own resources at `moment`, in
// namespace `ns` (empty: all), sorted by namespace and name; `name`, when
// not empty, asks for that one object (with its full history for a
// WorkloadHistory).
std::vector<nlohmann::json> ledgerObjects(const ApiResource& resource, const Moment& moment,
                                          ServeContext& context, std::string_view ns,
                                          std::string_view name);

// GET /ledger/v1/{range,state,usage,report,workload,why}.
ApiResponse handleLedgerRequest(const ApiRequest& request, ServeContext& context);

}  // namespace ledger::serve
