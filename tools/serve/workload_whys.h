// WorkloadWhy, the ledger's own resource that puts `ledger-query why` where
// kubectl lists it (ledger_api.h): one object per Workload live at the
// moment, its status the why command's timeline up to the moment
// (intervals with what blocked each pending one, evictions with preemptor,
// policy and whether they conform, findings) and a summary the table prints
// (state, total time pending, evictions, non-conforming preemptions).
//
// Each object costs one why question (a workload history and a fold per
// pending interval and eviction); answers about a past moment are kept in
// the AnswerCache, keyed by seq and workload, since records never change.
//
// Functions only; thread-safe as ServeContext is. Errors: throw ApiError.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tools/serve/moment.h"
#include "tools/serve/serve_context.h"

namespace ledger::serve {

// The WorkloadWhy of ns/name from the why command's JSON (`why`), counting
// an interval still open to `momentNs`. metadata.creationTimestamp is the
// first interval's start, so AGE reads as the Workload's. Throws ApiError
// (500) for JSON that is not the why command's.
nlohmann::json workloadWhyObject(const std::string& ns, const std::string& name,
                                 const nlohmann::json& why, const Moment& moment);

// The WorkloadWhys of the Workloads in `state` (the state report at
// `moment`) in namespace `ns` (empty: all) named `name` (empty: all).
std::vector<nlohmann::json> workloadWhyObjects(const nlohmann::json& state, const Moment& moment,
                                               ServeContext& context, std::string_view ns,
                                               std::string_view name);

}  // namespace ledger::serve
