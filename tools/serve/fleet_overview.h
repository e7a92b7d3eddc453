// The fleet's overview (GET /ledger/v1/clusters of `serve --fleet`, and the
// page at / that draws it): per cluster one row, read from its state report
// at its last record (the `state` command's JSON, docs/reference.md "The
// state report"):
//   cluster, lastSeq, lastTime, behindSeconds (the wall clock less lastTime),
//   signed (its copy carries its cluster's head signature), the proof
//   members of /ledger/v1/range,
//   findings: {TYPE: count} of the findings open at its last record,
//   pending: unfinished workloads without a quota reservation, over its
//     ClusterQueues (workloads.pending),
//   clusterQueues: how many,
//   resources: [{resource, nominal, reserved, held, reservedShare,
//     heldShare}]: per resource its ClusterQueues' quota rows summed over
//     queues and flavors (nominal, reserved) and what their workloads' pods
//     hold (draHeld.quota[].held); quantities as Kubernetes prints them, null
//     when a sum is past the exact range; the shares are of nominal (null
//     when nominal is zero or a figure null), for the bars.
//
// Thread-safe (reads only). Errors: summarizeState() throws
// std::invalid_argument for a report whose quantities do not parse;
// clusterRow() throws ApiError and what the QueryRunner throws.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tools/serve/serve_context.h"

namespace ledger::serve {

// findings, pending, clusterQueues and resources of one state report.
nlohmann::json summarizeState(const nlohmann::json& state);

// One cluster's row; its summary kept in the context's answer cache per
// ledger length. `isSigned` nullopt: not known (row without "signed").
nlohmann::json clusterRow(const std::string& cluster, ServeContext& context,
                          std::optional<bool> isSigned);

}  // namespace ledger::serve
