// Questions across the fleet's copies (docs/reference.md, "Questions across
// the fleet"): the per-cluster ledgers `ledger-ingest --from-nats` keeps
// under one directory, read as they are:
//   ledger-query --fleet DIR state|usage|report|workload   ask every copy
//   ledger-replay --fleet DIR verify                       check every copy
// Apart from tools/fleet_command.h, which ships and receives records through
// NATS, so that a program asking questions does not link the NATS client.
//
// Throws UsageError for bad arguments, and what the per-copy commands throw.
// Not thread-safe (one command per process).
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ledger/ledger.h"
#include "tools/query_commands.h"

namespace ledger::cli {

// A copy's head signature as the consumer kept it (head_signature.h), or
// nullopt for an unsigned copy (kept with --allow-unsigned).
struct CopySignature {
  std::uint64_t seq = 0;
  std::string text;
};
std::optional<CopySignature> copySignatureOf(const Ledger& copy);

// ledger-replay --fleet DIR verify [--trusted-keys KEYS]: the log checks of
// `verify` on each copy, and its head signature: "verified" when KEYS hold a
// key of its cluster that made it, over the copy's own head; "unsigned";
// "not checked" without KEYS. Exit 3 when a copy fails, or, with KEYS, when
// a head is not verified.
int runFleetVerify(const std::string& dir, const std::optional<std::string>& trustedKeys, bool json,
                   std::ostream& out,
                   const std::function<int(const Ledger&, std::ostream&)>& verifyLog);

// The clusters under a fleet directory (name, path), by name; UsageError
// when it is not a directory.
std::vector<std::pair<std::string, std::string>> fleetClusters(const std::string& dir);

// `end` across the fleet: the latest of its copies' last records (each copy
// opened when `end` is asked for); UsageError when none holds a record.
LedgerEnd fleetLastRecordEnd(const std::string& dir);

// ledger-query --fleet DIR COMMAND: the command on every copy, each answer
// tagged with its cluster; `report` sums exactly, by cluster with
// --by cluster.
int runFleetQuery(const std::string& dir, const std::string& command, const QueryArgs& args,
                  std::ostream& out);

// Runs `each` on every copy opened read-only, for a per-cluster command
// (ledger-replay --fleet DIR verify): with JSON output the answers become
// {"clusters": [{"cluster": NAME, ...answer}]}, else each is headed by its
// cluster; each answer says whether the copy is signed ("signed" in JSON,
// "(unsigned)" after the cluster's name). `each` returning nullopt leaves its
// cluster out (a workload it never saw). Returns the worst exit code, or nullopt, printing nothing,
// when every cluster was left out.
std::optional<int> forEachFleetCopy(
    const std::string& dir, bool json, std::ostream& out,
    const std::function<std::optional<int>(const Ledger&, std::ostream&)>& each);

}  // namespace ledger::cli
