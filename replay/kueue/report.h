// The state report of docs/reference.md: ClusterQueue quota rows, workloads with
// recorded and computed charges, DRA pools with counter consumption and
// allocations, and the audit findings - all computed from a ClusterState.
//
// buildReport is a pure function of the state (no clock, no hash-order
// iteration): the same state gives the same report, byte for byte once
// printed. Thread-compatible; never throws for odd objects (they become
// findings). Throws ReplayError (corrupt) when a stored object does not
// decode in full (a damaged ledger; cluster_state.h, "Errors").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "replay/fold/cluster_state.h"
#include "replay/kueue/resources.h"

namespace ledger::replay {

struct QuotaRow {
  std::string flavor;
  std::string resource;
  Quantity nominal;
  std::optional<Quantity> borrowingLimit;
  std::optional<Quantity> lendingLimit;
  Quantity reserved;
  Quantity admitted;
  // A sum past Quantity's exact range (a QuantityOverflow finding): printed
  // as null or "unrepresentable", never as a number.
  bool reservedUnrepresentable = false;
  bool admittedUnrepresentable = false;
};

struct HeldCounter {
  std::string driver;
  std::string counter;
  Quantity consumed;
  bool consumedUnrepresentable = false;  // as QuotaRow's
};

// What pods hold now through allocated ResourceClaims (docs/reference.md,
// "Held against charged"), per (ClusterQueue, flavor, resource) in the quota
// resource's units: keyed as the usage report's held integral is (the
// Workload's admission's ClusterQueue, the flavor it charges the resource
// in when exactly one does; "-" otherwise and for pods of no Workload).
// Uncharged: the sum over holders of max(0, held - charged).
struct HeldRow {
  std::string clusterQueue;
  std::string flavor;
  std::string resource;
  Quantity held;
  Quantity uncharged;
  bool heldUnrepresentable = false;  // as QuotaRow's
  bool unchargedUnrepresentable = false;
};

struct ClusterQueueReport {
  std::string name;
  std::string cohort;
  std::vector<QuotaRow> quotas;
  int pending = 0;
  int reserved = 0;
  int admitted = 0;
  // DRA devices actually allocated to this queue's workloads.
  int heldDevices = 0;
  std::vector<HeldCounter> heldCounters;
  // StateReport::held's rows of this queue.
  std::vector<HeldRow> held;
};

struct WorkloadReport {
  std::string ns;
  std::string name;
  std::string uid;
  std::string clusterQueue;
  std::string localQueue;
  std::string state;  // Finished, Admitted, QuotaReserved, Pending
  bool quotaReserved = false;
  bool admitted = false;
  bool finished = false;
  std::int32_t priority = 0;
  ResourceList recorded;
  // What Kueue's rules charge, on the cluster as it was at computedAt: the
  // record where the quota was last reserved, else the report's moment.
  ResourceList computed;
  std::vector<std::string> errors;
  std::uint64_t computedAtSeq = 0;
  std::int64_t computedAtNs = 0;
  // Reserved before the ledger saw it (charge_history.h): computedAt is the
  // record that first showed it reserved, inside a snapshot, and
  // reservedAtNs the QuotaReserved condition's time (0: not given).
  bool computedAtSnapshot = false;
  std::int64_t reservedAtNs = 0;
  // For a reserved workload whose charge by the report's state differs:
  // that charge and its errors.
  bool hasCurrent = false;
  ResourceList currentComputed;
  std::vector<std::string> currentErrors;
};

// The DRA mapping in effect at the report's moment (charge_history.h).
struct ConfigReport {
  std::string mappingSource;  // "ConfigMap ns/name", "Kueue cluster", ...
  std::uint64_t changedAtSeq = 0;
  std::int64_t changedAtNs = 0;
  std::uint64_t effectiveAtSeq = 0;
  std::int64_t effectiveAtNs = 0;
  bool controllerRestart = false;
};

struct CounterReport {
  std::string counterSet;
  std::string counter;
  Quantity capacity;
  Quantity consumed;
  bool consumedUnrepresentable = false;  // as QuotaRow's
};

struct AllocationReport {
  std::string device;
  std::string request;
  std::string claim;         // namespace/name
  std::string pod;           // namespace/name, "" when unknown
  std::string workload;      // namespace/name, "" when unattributed
  std::string clusterQueue;  // "" when unattributed
  bool published = true;     // false: no current slice publishes the device
};

struct PoolReport {
  std::string driver;
  std::string pool;
  std::int64_t generation = 0;
  bool complete = false;
  std::int64_t resourceSliceCount = 0;
  std::size_t devices = 0;
  std::vector<CounterReport> counters;
  std::vector<AllocationReport> allocations;
};

struct Finding {
  std::string type;
  std::string object;  // "Kind namespace/name" or "Kind name"
  std::string message;
  bool operator==(const Finding&) const = default;
};

struct StateReport {
  std::uint64_t seq = 0;
  std::int64_t timeNs = 0;
  std::string digest;  // hex SHA-256 of the folded state
  std::vector<ClusterQueueReport> clusterQueues;
  std::vector<WorkloadReport> workloads;
  std::vector<PoolReport> pools;
  std::vector<HeldRow> held;  // sorted by (ClusterQueue, flavor, resource)
  std::vector<Finding> findings;
  std::optional<ConfigReport> config;  // absent when no source was ever seen
};

// What buildReport computes. A caller that prints only part of the report
// (`ledger-query usage`: the ClusterQueue rows) leaves out what it does not
// print; what it computes is the same either way.
struct ReportOptions {
  // The state digest: a canonical copy of every live object, hashed, about
  // a quarter of a report's work. Without it `digest` is empty, and an
  // object damaged only in fields the audits do not read goes unnoticed
  // (the digest reads every object in full; `ledger-replay verify` checks
  // the ledger itself).
  bool digest = true;
};

StateReport buildReport(const ClusterState& state, const ReportOptions& options = {});

}  // namespace ledger::replay
