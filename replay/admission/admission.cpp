#include "replay/admission/admission.h"

#include <algorithm>

#include "replay/admission/preemption_candidates.h"
#include "replay/admission/shortfall_reason.h"
#include "replay/kueue/audit.h"
#include "replay/kueue/workload_requests.h"
#include "replay/kueue/workload_usage.h"

namespace ledger::replay::admission {

namespace {

// The first reason Kueue would not even try the workload, or "".
std::string queueBlocker(const ClusterState& state, const AdmissionSubject& s, AdmissionReport& r) {
  auto wl = s.workload;
  if (wl.getHasAdmission() && wl.getAdmissionClusterQueue().size() > 0) {
    r.clusterQueue = wl.getAdmissionClusterQueue().cStr();
  } else {
    if (r.localQueue.empty()) return "the workload names no LocalQueue (spec.queueName is empty)";
    const StoredObject* lq = state.find(ObjectKind::kLocalQueue, s.ns, r.localQueue);
    if (lq == nullptr) return "LocalQueue " + r.localQueue + " doesn't exist";
    r.clusterQueue = lq->projection().getBody().getLocalQueue().getClusterQueue().cStr();
  }
  const StoredObject* cq = state.find(ObjectKind::kClusterQueue, r.clusterQueue);
  if (cq == nullptr) return "ClusterQueue " + r.clusterQueue + " doesn't exist";
  auto spec = cq->projection().getBody().getClusterQueue();
  r.cohort = spec.getCohort().cStr();
  const std::string inactive = "ClusterQueue " + r.clusterQueue + " is inactive";
  if (spec.getStopPolicy().size() > 0 && spec.getStopPolicy() != "None") {
    r.warnings.push_back("stopPolicy is " + std::string(spec.getStopPolicy().cStr()));
    return inactive;
  }
  std::string missing;
  for (auto rg : spec.getResourceGroups()) {
    for (auto f : rg.getFlavors()) {
      if (state.find(ObjectKind::kResourceFlavor, f.getName().cStr()) == nullptr) {
        r.warnings.push_back("ResourceFlavor " + std::string(f.getName().cStr()) +
                             " does not exist (FlavorNotFound)");
        missing = inactive;
      }
    }
  }
  return missing;
}

std::string modeWord(const FlavorChoice& c) {
  if (c.mode == AssignmentMode::kFit) return c.borrow > 0 ? "Borrow" : "Fit";
  return modeName(c.mode);
}

class ReportBuilder {
 public:
  ReportBuilder(const QuotaView& quota, const std::string& cq, const std::set<std::string>& binary)
      : quota_(quota), cq_(cq), binary_(binary) {}

  std::string fmt(const std::string& res, Int128 v) const { return formatKueue(res, v, binary_); }

  PodSetReport podSet(const PodSetRequest& req, const PodSetAssignment* psa) const {
    PodSetReport p;
    p.name = req.name;
    p.count = req.count;
    p.evaluated = psa != nullptr;
    for (const auto& [res, v] : psa ? psa->requests : req.requests) p.requests[res] = fmt(res, v);
    if (psa == nullptr) return p;
    for (const auto& [res, choice] : psa->flavors) {
      FlavorReport f{res, choice.flavor, modeWord(choice), std::nullopt, std::nullopt};
      if (choice.mode == AssignmentMode::kFit && choice.borrow > 0) {  // "Borrow"
        for (const QuotaCheck& c : psa->checks) {  // the last check of the chosen flavor
          if (c.flavor == choice.flavor && c.resource == res) {
            f.borrowed = fmt(res, borrowedAmount(quota_, cq_, c));
          }
        }
        f.cohort = choice.borrowCohort.empty() ? quota_.parentOf(cq_, false) : choice.borrowCohort;
      }
      p.flavors.push_back(std::move(f));
    }
    if (psa->fit()) return p;
    for (const std::string& res : psa->uncovered) {
      const Int128 v = psa->requests.at(res);
      p.shortfalls.push_back(ShortfallReport{
          res, "", fmt(res, v), "0", fmt(res, v),
          "cluster-queue " + cq_ + " has no quota for " + res + ": no resource group covers it",
          "resource " + res + " unavailable in ClusterQueue"});
    }
    // Only what Kueue's status reports (a failing resource group replaces
    // the reasons gathered for the groups before it).
    const auto reported = [&](const std::string& reason) {
      return !reason.empty() &&
             std::find(psa->reasons.begin(), psa->reasons.end(), reason) != psa->reasons.end();
    };
    for (const QuotaCheck& c : psa->checks) {
      if (!reported(c.reason)) continue;
      p.shortfalls.push_back(ShortfallReport{c.resource, c.flavor, fmt(c.resource, c.value()),
                                             fmt(c.resource, c.available),
                                             fmt(c.resource, c.value() - c.available),
                                             explainShortfall(quota_, cq_, c, binary_), c.reason});
    }
    for (const auto& x : psa->rejectedFlavors) {
      if (reported(x.reason)) p.rejectedFlavors.push_back({x.flavor, x.reason});
    }
    return p;
  }

 private:
  const QuotaView& quota_;
  const std::string& cq_;
  const std::set<std::string>& binary_;
};

std::vector<PodSetRequest> podSetRequests(const WorkloadRequests& reqs,
                                          schema::Workload::Reader wl) {
  std::vector<PodSetRequest> out;
  auto specs = wl.getPodSets();
  // totalRequestsFromPodSets counts the pods podSetsCountsAfterReclaim
  // leaves: a workload evicted with reclaimable pods keeps the count
  // (kueue#14609) and asks for that much less when it is tried again.
  const auto afterReclaim = podSetsCountsAfterReclaim(wl);
  for (std::size_t i = 0; i < reqs.podSets.size() && i < specs.size(); ++i) {
    const PodSetRequests& ps = reqs.podSets[i];
    std::int64_t count = ps.count;
    if (auto it = afterReclaim.find(ps.name); it != afterReclaim.end()) {
      count = std::min<std::int64_t>(count, it->second);
    }
    PodSetRequest r;
    r.name = ps.name;
    r.count = static_cast<std::int32_t>(count);
    r.podSpec = specs[static_cast<unsigned>(i)].getTemplate();
    // totalRequestsFromPodSets: per-pod ResourceValue, floored at 0, times count.
    for (const auto& [name, q] : ps.perPod) {
      r.requests[name] = std::max<Int128>(0, kueueUnits(name, q)) * count;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::string aggregateErrors(const std::vector<std::string>& messages) {
  std::vector<std::string> unique;
  for (const auto& m : messages) {
    if (std::find(unique.begin(), unique.end(), m) == unique.end()) unique.push_back(m);
  }
  if (unique.size() == 1) return unique[0];
  std::string out = "[";
  for (std::size_t i = 0; i < unique.size(); ++i) out += (i ? ", " : "") + unique[i];
  return out + "]";
}

AdmissionReport evaluateAdmission(const ClusterState& state, const AdmissionSubject& s) {
  AdmissionReport r;
  r.seq = state.seq();
  r.timeNs = state.timeNs();
  r.workload = s.ns + "/" + s.name;
  r.source = s.fromLedger ? "ledger" : "manifest";
  auto wl = s.workload;
  r.state = conditionsOf(wl).state();
  r.priority = wl.getPriority();
  r.localQueue = wl.getQueueName().cStr();
  if (std::string blocker = queueBlocker(state, s, r); !blocker.empty()) {
    r.inadmissible = blocker;
    r.message = blocker;
    return r;
  }
  AuditContext audit(state);
  const StoredObject* cqObject = state.find(ObjectKind::kClusterQueue, r.clusterQueue);
  const WorkloadRequests reqs = workloadRequests(audit.dra, s.ns, wl, cqObject);
  r.warnings.insert(r.warnings.end(), reqs.problems.begin(), reqs.problems.end());
  if (!reqs.draErrors.empty()) {
    std::vector<std::string> messages;
    for (const auto& e : reqs.draErrors) messages.push_back(e.render());
    r.inadmissible = aggregateErrors(messages);
    r.message = *r.inadmissible;
    return r;
  }

  const auto workloads = reservedWorkloads(state, ClusterState::key(s.ns, s.name));
  const QuotaTree tree(state, usageByClusterQueue(workloads));
  const QuotaView quota(tree);
  const CandidateFinder finder(state, quota, workloads,
                               Preemptor{r.clusterQueue, r.priority, s.creationNs});
  AssignerContext ctx{
      state,          quota,
      r.clusterQueue, [&](const FlavorResource& fr, Int128 q) { return finder.simulate(fr, q); },
      false,          binaryFormattedResources(state)};
  const auto requests = podSetRequests(reqs, wl);
  const Assignment assignment = assignFlavors(ctx, requests);

  const ReportBuilder builder(quota, r.clusterQueue, ctx.binaryResources);
  std::vector<FlavorResource> preempting;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const PodSetAssignment* psa = i < assignment.podSets.size() ? &assignment.podSets[i] : nullptr;
    r.podSets.push_back(builder.podSet(requests[i], psa));
    if (psa == nullptr) continue;
    for (const auto& [res, choice] : psa->flavors) {
      if (choice.mode == AssignmentMode::kPreempt) preempting.emplace_back(choice.flavor, res);
    }
  }
  const AssignmentMode mode = assignment.representativeMode();
  r.fits = mode == AssignmentMode::kFit;
  r.wouldNeedPreemption = mode == AssignmentMode::kPreempt;
  for (const auto& ps : r.podSets) {
    for (const auto& f : ps.flavors) r.borrows = r.borrows || f.mode == "Borrow";
  }
  if (r.fits) {
    r.message = "fits: quota would be reserved in ClusterQueue " + r.clusterQueue;
    if (r.borrows) r.message += ", borrowing from its cohort";
  } else {
    r.message = assignment.message();
  }
  if (r.wouldNeedPreemption) {
    for (const Holder& h : finder.holders(preempting)) {
      CandidateReport c{h.workload->key,
                        h.workload->priority,
                        h.workload->clusterQueue,
                        h.allowedByPolicy,
                        h.policy,
                        {}};
      for (const auto& fr : preempting) {
        auto it = h.workload->usage.find(fr);
        if (it != h.workload->usage.end()) {
          c.holds[fr.first][fr.second] = builder.fmt(fr.second, kueueUnits(fr.second, it->second));
        }
      }
      r.preemptionCandidates.push_back(std::move(c));
    }
  }
  return r;
}

}  // namespace ledger::replay::admission
