// The answer of `ledger-query admit`: would a workload fit its ClusterQueue at
// a moment, and if not, why. tools/render/admission_format.h prints it.
//
// JSON shape (stable; keys in this order, arrays in the order stated):
// {
//   "at": {"seq": N, "time": "RFC 3339"},
//   "workload": "ns/name", "source": "ledger"|"manifest", "state": "Pending"|...,
//   "priority": 0, "localQueue": "...", "clusterQueue": "...", "cohort": "..."|null,
//   "fits": bool,                 // every pod set got a flavor in Fit mode
//   "inadmissible": null|"...",   // Kueue's reason when it cannot even be tried
//   "wouldNeedPreemption": bool,  // flavors found, but only by preempting
//   "borrows": bool,              // some flavor is taken by borrowing
//   "message": "...",             // Kueue's Assignment.Message, or a summary
//   "podSets": [{                 // workload order
//     "name": "main", "count": 1, "evaluated": bool,  // Kueue stops at the first failure
//     "requests": {"cpu": "1", ...},                   // pod set totals, Kueue's formatting
//     "flavors": [{"resource", "flavor", "mode": "Fit|Borrow|Preempt",
//                  "borrowed": "qty"|null, "cohort": "name"|null}],  // by resource; borrowed
//                  // and cohort only in Borrow mode (what this request adds beyond nominal)
//     "shortfalls": [{"resource", "flavor", "requested", "available", "short",
//                     "reason", "kueueMessage"}],  // in check order; only for a pod set that
//                     // does not fit, and only the checks Kueue's status reports
//     "rejectedFlavors": [{"flavor", "reason"}]}],  // taints/affinity/missing flavor, likewise
//   "preemptionCandidates": [{"workload", "priority", "clusterQueue", "allowedByPolicy",
//                             "policy", "holds": {"flavor": {"resource": "qty"}}}],  // by workload
//   "warnings": ["..."]
// }
//
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ledger::replay::admission {

struct FlavorReport {
  std::string resource;
  std::string flavor;
  std::string mode;  // Fit, Borrow, Preempt, NoFit
  std::optional<std::string> borrowed;
  std::optional<std::string> cohort;
};

struct ShortfallReport {
  std::string resource;
  std::string flavor;
  std::string requested;
  std::string available;
  std::string shortBy;
  std::string reason;        // in plain words
  std::string kueueMessage;  // Kueue's own status text for this check
};

struct RejectedFlavorReport {
  std::string flavor;
  std::string reason;
};

struct PodSetReport {
  std::string name;
  std::int64_t count = 0;
  bool evaluated = false;
  std::map<std::string, std::string> requests;
  std::vector<FlavorReport> flavors;
  std::vector<ShortfallReport> shortfalls;
  std::vector<RejectedFlavorReport> rejectedFlavors;
};

struct CandidateReport {
  std::string workload;
  std::int32_t priority = 0;
  std::string clusterQueue;
  bool allowedByPolicy = false;
  std::string policy;
  std::map<std::string, std::map<std::string, std::string>> holds;  // flavor -> resource -> qty
};

struct AdmissionReport {
  std::uint64_t seq = 0;
  std::int64_t timeNs = 0;
  std::string workload;  // ns/name
  std::string source;    // "ledger" or "manifest"
  std::string state;
  std::int32_t priority = 0;
  std::string localQueue;
  std::string clusterQueue;
  std::string cohort;
  bool fits = false;
  std::optional<std::string> inadmissible;
  bool wouldNeedPreemption = false;
  bool borrows = false;
  std::string message;
  std::vector<PodSetReport> podSets;
  std::vector<CandidateReport> preemptionCandidates;
  std::vector<std::string> warnings;
};

}  // namespace ledger::replay::admission
