#include "replay/history/blocked_by.h"

#include <set>

#include "replay/admission/admission.h"
#include "replay/admission/preemption_candidates.h"
#include "replay/admission/quota_view.h"

namespace ledger::replay::history {

namespace adm = admission;

Blocked blockedAt(const ClusterState& state, const std::string& ns, const std::string& name) {
  Blocked out;
  const StoredObject* obj = state.find(ObjectKind::kWorkload, ns, name);
  if (obj == nullptr) return out;
  adm::AdmissionSubject subject;
  subject.ns = ns;
  subject.name = name;
  subject.workload = obj->projection().getBody().getWorkload();
  subject.creationNs = obj->projection().getCreationNs();
  const adm::AdmissionReport report = adm::evaluateAdmission(state, subject);
  if (report.inadmissible) out.shortfalls.push_back(*report.inadmissible);
  std::set<FlavorResource> shortOf;
  for (const auto& ps : report.podSets) {
    for (const auto& sf : ps.shortfalls) {
      shortOf.emplace(sf.flavor, sf.resource);
      out.shortfalls.push_back(sf.reason);
    }
  }
  if (shortOf.empty() || report.clusterQueue.empty()) return out;
  const auto workloads = adm::reservedWorkloads(state, ClusterState::key(ns, name));
  const QuotaTree tree(state, adm::usageByClusterQueue(workloads));
  const adm::QuotaView view(tree);
  const std::string root = view.rootOf(report.clusterQueue, false);
  for (const auto& w : workloads) {
    const bool sameQueue = w.clusterQueue == report.clusterQueue;
    if (!sameQueue && (root.empty() || view.rootOf(w.clusterQueue, false) != root)) continue;
    for (const auto& fr : shortOf) {
      auto it = w.usage.find(fr);
      if (it == w.usage.end() || it->second.isZero()) continue;
      out.holders.push_back(
          {w.key, w.clusterQueue, w.priority, fr.first, fr.second, it->second.toString()});
    }
  }
  return out;
}

std::string quotaReservedText(const ClusterState& state, const std::string& ns,
                              const std::string& name) {
  const StoredObject* obj = state.find(ObjectKind::kWorkload, ns, name);
  if (obj == nullptr) return {};
  for (auto c : obj->projection().getBody().getWorkload().getConditions()) {
    if (c.getType() != "QuotaReserved") continue;
    std::string text = c.getReason().cStr();
    if (c.getMessage().size() > 0)
      text += (text.empty() ? "" : ": ") + std::string(c.getMessage().cStr());
    return text;
  }
  return {};
}

}  // namespace ledger::replay::history
