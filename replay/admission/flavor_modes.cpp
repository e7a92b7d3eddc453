// The mode arithmetic of flavorassigner.go: isPreferred, shouldTryNextFlavor,
// preemptionMode.flavorAssignmentMode, PodSetAssignment.RepresentativeMode,
// Assignment.RepresentativeMode and Assignment.Message.
#include <algorithm>

#include "replay/admission/flavor_assigner.h"

namespace ledger::replay::admission {

const char* modeName(AssignmentMode mode) {
  switch (mode) {
    case AssignmentMode::kNoFit:
      return "NoFit";
    case AssignmentMode::kPreempt:
      return "Preempt";
    case AssignmentMode::kFit:
      return "Fit";
  }
  return "NoFit";
}

// preemptionMode.flavorAssignmentMode: every preemption outcome (with or
// without candidates) is Preempt.
AssignmentMode assignmentMode(PreemptionMode mode) {
  switch (mode) {
    case PreemptionMode::kNoFit:
      return AssignmentMode::kNoFit;
    case PreemptionMode::kFit:
      return AssignmentMode::kFit;
    default:
      return AssignmentMode::kPreempt;
  }
}

FlavorFungibility fungibilityOf(schema::ClusterQueue::Reader cq) {
  FlavorFungibility f;
  // The projection already maps v1beta1's Borrow/Preempt to MayStopSearch.
  f.borrowTryNext = cq.getWhenCanBorrow() == "TryNextFlavor";
  f.preemptTryNext =
      cq.getWhenCanPreempt().size() == 0 || cq.getWhenCanPreempt() == "TryNextFlavor";
  return f;
}

bool isPreferred(const GranularMode& a, const GranularMode& b) {
  if (a.preemption == PreemptionMode::kNoFit) return false;
  if (b.preemption == PreemptionMode::kNoFit) return true;
  // A flavor without preemption candidates ranks below any viable mode.
  const bool aNone = a.preemption == PreemptionMode::kNoCandidates;
  const bool bNone = b.preemption == PreemptionMode::kNoCandidates;
  if (aNone != bNone) return !aNone;
  // BorrowingOverPreemption (the default preference).
  if (a.preemption != b.preemption) return a.preemption > b.preemption;
  return a.borrowingLevel < b.borrowingLevel;
}

bool shouldTryNextFlavor(const GranularMode& mode, const FlavorFungibility& f) {
  if (mode.preemption == PreemptionMode::kNoFit ||
      mode.preemption == PreemptionMode::kNoCandidates) {
    return true;
  }
  const bool preemptMode =
      mode.preemption == PreemptionMode::kPreempt || mode.preemption == PreemptionMode::kReclaim;
  if (preemptMode && f.preemptTryNext) return true;
  return mode.borrowingLevel != 0 && f.borrowTryNext;
}

AssignmentMode PodSetAssignment::representativeMode() const {
  if (fit()) return AssignmentMode::kFit;
  if (flavors.empty()) return AssignmentMode::kNoFit;
  AssignmentMode mode = AssignmentMode::kFit;
  for (const auto& [resource, choice] : flavors) mode = std::min(mode, choice.mode);
  return mode;
}

std::string PodSetAssignment::statusMessage() const {
  std::vector<std::string> sorted = reasons;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& r : sorted) out += (out.empty() ? "" : ", ") + r;
  return out;
}

AssignmentMode Assignment::representativeMode() const {
  if (podSets.empty()) return AssignmentMode::kNoFit;
  AssignmentMode mode = AssignmentMode::kFit;
  for (const auto& ps : podSets) mode = std::min(mode, ps.representativeMode());
  return mode;
}

std::string Assignment::message() const {
  std::string out;
  for (const auto& ps : podSets) {
    if (ps.fit()) continue;
    if (!out.empty()) out += "; ";
    out += "couldn't assign flavors to pod set " + ps.name + ": " + ps.statusMessage();
  }
  return out;
}

}  // namespace ledger::replay::admission
