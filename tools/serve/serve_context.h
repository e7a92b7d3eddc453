// What every request handler of `ledger-query serve` reads: the ledger as
// it is for this request, what it holds (the catalog), the folded states
// kept between requests, and the ledger's own questions (the CLI's state,
// usage and workload commands, handed in by the program so this module does
// not depend on it).
//
// Borrowed references, valid for one request. The QueryRunner is called
// from several request threads at once and returns the command's JSON; it
// throws ApiError (400) for a bad question.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ledger/ledger.h"
#include "tools/serve/answer_cache.h"
#include "tools/serve/objects_at.h"
#include "tools/serve/proof_watch.h"
#include "tools/serve/resource_catalog.h"

namespace ledger::serve {

// One `ledger-query` question (docs/reference.md): `command` is state,
// usage, report, workload or why, with that command's flags as the user wrote them
// (empty: not given); the runner reads them as the CLI does.
struct QueryRequest {
  std::string command;
  std::optional<std::uint64_t> seq;  // state: the moment
  std::string from, to, step;        // usage: a series; report: from, to
  std::string by;                    // report: the grouping (--by), empty: cluster-queue
  std::string target;                // workload, why: NS/NAME
  std::string clusterQueue;
};

using QueryRunner = std::function<std::string(const Ledger&, const QueryRequest&)>;

struct ServeContext {
  const Ledger& ledger;
  const ResourceCatalog& catalog;
  StateCache& states;
  const QueryRunner& query;
  AnswerCache& answers;    // state reports and answers about past moments
  std::int64_t nowNs = 0;  // the wall clock, for /at/now
  // The ledger's newest verification, as of this request (proof_watch.h);
  // null: not known to the caller, stated as never verified.
  const ProofState* proof = nullptr;
};

}  // namespace ledger::serve
