// Would a workload fit its ClusterQueue in a given folded state, and if not,
// why. The steps Kueue takes before and during a scheduling attempt:
//   1. the queue: spec.queueName -> LocalQueue -> ClusterQueue (or the
//      ClusterQueue of status.admission); a missing LocalQueue or
//      ClusterQueue, or an inactive ClusterQueue (stopPolicy, a ResourceFlavor
//      it names does not exist), is the answer, in Kueue's words
//      ("LocalQueue q doesn't exist", "ClusterQueue cq is inactive");
//   2. the charge: the audit's `computed` requests (workload_requests.h,
//      DRA rules included); a DRA error is the answer ("inadmissible"), with
//      Kueue's aggregate rendering of the error list;
//   3. the flavor assignment (flavor_assigner.h) against the quota tree of
//      every other workload holding quota - the workload's own reservation,
//      if it has one, is left out - with preemption judged by
//      preemption_candidates.h;
//   4. the report (admission_report.h): flavors, borrowing, shortfalls in
//      plain words, the workloads preemption would have to take quota from.
//
// Ownership: borrows the state and the subject's projection for the call.
// Not thread-safe (builds a DRA context with a CEL cache); never throws
// except std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>

#include "replay/admission/admission_report.h"
#include "replay/fold/cluster_state.h"

namespace ledger::replay::admission {

struct AdmissionSubject {
  std::string ns;
  std::string name;
  schema::Workload::Reader workload;
  std::int64_t creationNs = 0;  // queue order for LowerOrNewerEqualPriority
  bool fromLedger = true;       // false: a manifest file
};

AdmissionReport evaluateAdmission(const ClusterState& state, const AdmissionSubject& subject);

// ErrorList.ToAggregate().Error(): duplicates dropped, one message as is,
// several as "[a, b]".
std::string aggregateErrors(const std::vector<std::string>& messages);

}  // namespace ledger::replay::admission
