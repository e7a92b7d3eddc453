// ClusterQueue usage as Kueue's cache accounts it (pkg/cache/scheduler):
// a workload with QuotaReserved=True that is not Finished reserves its
// podSetAssignments' resourceUsage, scaled down by status.reclaimablePods
// (pkg/workload totalRequestsFromAdmission), in the flavor named for each
// resource; Admitted=True adds it to admitted usage. Findings: QuotaExceeded
// (beyond what nominal quota plus borrowing allows) and StatusMismatch (the
// queue's own status disagrees with the recomputed usage; the message names
// what reclaimable pods gave back, since a status that did not apply them, or
// a stale count (kueue#14609), is where the two part).
#include "replay/kueue/audit.h"
#include "replay/kueue/quota_tree.h"

namespace ledger::replay {

namespace {

using ByFlavor = std::map<FlavorResource, Quantity>;

void checkStatus(AuditContext& ctx, const std::string& cq,
                 capnp::List<schema::FlavorUsage>::Reader status, const char* field,
                 const std::vector<QuotaRow>& rows, bool admittedColumn,
                 const ByFlavor& givenBack) {
  std::map<FlavorResource, Quantity> reported;
  for (auto f : status) {
    for (auto r : f.getResources()) {
      reported[{f.getName().cStr(), r.getKey().cStr()}] =
          Quantity::tryParse(r.getValue().cStr()).value_or(Quantity());
    }
  }
  for (const QuotaRow& row : rows) {
    // A sum past the exact range has its own finding and nothing to compare.
    if (admittedColumn ? row.admittedUnrepresentable : row.reservedUnrepresentable) continue;
    const Quantity mine = admittedColumn ? row.admitted : row.reserved;
    auto it = reported.find({row.flavor, row.resource});
    const Quantity theirs = it == reported.end() ? Quantity() : it->second;
    if (kueueValue(row.resource, mine) != kueueValue(row.resource, theirs)) {
      std::string message = std::string(field) + " " + row.flavor + "/" + row.resource +
                            ": status says " + theirs.toString() + ", workloads add up to " +
                            mine.toString();
      auto back = givenBack.find({row.flavor, row.resource});
      Quantity before = mine;
      if (back != givenBack.end() && !back->second.isZero() && addExact(before, back->second)) {
        message += " (resourceUsage " + before.toString() + " less " + back->second.toString() +
                   " for status.reclaimablePods)";
      }
      ctx.finding("StatusMismatch", objectRef("ClusterQueue", "", cq), message);
    }
  }
}

}  // namespace

std::vector<ClusterQueueReport> auditQueues(AuditContext& ctx,
                                            const std::vector<WorkloadAudit>& wls) {
  QuotaTree::Usage reserved, admitted;
  // What reclaimable pods give back: resourceUsage less the held usage.
  QuotaTree::Usage reclaimedReserved, reclaimedAdmitted;
  std::map<std::string, std::array<int, 3>> counts;  // pending, reserved, admitted
  // Sums past the exact range, per ClusterQueue: left out of the rows and
  // of the quota tree (each with a QuantityOverflow finding).
  std::set<std::pair<std::string, FlavorResource>> lostReserved, lostAdmitted;
  for (const WorkloadAudit& a : wls) {
    const WorkloadReport& r = a.report;
    if (r.clusterQueue.empty() || r.finished) continue;
    auto& c = counts[r.clusterQueue];
    if (!r.quotaReserved) {
      ++c[0];
      continue;
    }
    ++c[1];
    if (r.admitted) ++c[2];
    for (const auto& [fr, q] : a.usage) {
      if (!addExact(reserved[r.clusterQueue][fr], q)) lostReserved.insert({r.clusterQueue, fr});
      if (r.admitted && !addExact(admitted[r.clusterQueue][fr], q)) {
        lostAdmitted.insert({r.clusterQueue, fr});
      }
    }
    auto wl = a.object == nullptr ? schema::Workload::Reader()
                                  : a.object->projection().getBody().getWorkload();
    if (wl.getReclaimablePods().size() == 0) continue;
    try {
      // Only a message's detail (checkStatus): what cannot be summed is not said.
      for (const auto& [fr, q] : recordedFlavorUsage(wl, nullptr)) {
        auto held = a.usage.find(fr);
        const Quantity back = q - (held == a.usage.end() ? Quantity() : held->second);
        if (!addExact(reclaimedReserved[r.clusterQueue][fr], back) ||
            (r.admitted && !addExact(reclaimedAdmitted[r.clusterQueue][fr], back))) {
          reclaimedReserved[r.clusterQueue].erase(fr);
          reclaimedAdmitted[r.clusterQueue].erase(fr);
        }
      }
    } catch (const std::overflow_error&) {
    }
  }
  for (const auto& [cq, fr] : lostReserved) {
    reserved[cq].erase(fr);
    ctx.overflow(objectRef("ClusterQueue", "", cq),
                 "reserved " + fr.first + "/" + fr.second + " (its workloads' usage added up)");
  }
  for (const auto& [cq, fr] : lostAdmitted) {
    admitted[cq].erase(fr);
    ctx.overflow(objectRef("ClusterQueue", "", cq),
                 "admitted " + fr.first + "/" + fr.second + " (its workloads' usage added up)");
  }
  QuotaTree tree(ctx.state, reserved);
  std::vector<ClusterQueueReport> out;
  for (const auto& [key, obj] : ctx.state.objects(ObjectKind::kClusterQueue)) {
    auto cq = obj->projection().getBody().getClusterQueue();
    ClusterQueueReport q;
    q.name = obj->name();
    q.cohort = cq.getCohort().cStr();
    for (auto rg : cq.getResourceGroups()) {
      for (auto f : rg.getFlavors()) {
        for (auto res : f.getResources()) {
          QuotaRow row;
          row.flavor = f.getName().cStr();
          row.resource = res.getName().cStr();
          const std::string nominalText = res.getNominalQuota().cStr();
          if (nominalText.empty()) {
            // Kueue's ClusterQueue CRD marks nominalQuota required; counted as zero.
            ctx.finding("InvalidQuota", objectRef("ClusterQueue", "", q.name),
                        "nominalQuota of " + row.flavor + "/" + row.resource +
                            " is missing or null (Kueue requires it); counted as zero");
          } else if (auto n = Quantity::tryParse(nominalText)) {
            row.nominal = *n;
            // Kueue's webhook rejects a negative quota (clusterqueue_webhook.go,
            // validateResourceQuantity:
            // "must be greater than or equal to 0"); one in the ledger was never
            // admitted by Kueue as such.
            if (n->isNegative()) {
              ctx.finding("InvalidQuota", objectRef("ClusterQueue", "", q.name),
                          "nominalQuota of " + row.flavor + "/" + row.resource + " is negative (" +
                              n->toString() + ")");
            }
          } else {
            ctx.finding("MalformedQuantity", objectRef("ClusterQueue", "", q.name),
                        "nominalQuota of " + row.flavor + "/" + row.resource + " is malformed");
          }
          row.borrowingLimit = optionalQuantity(res.getBorrowingLimit());
          row.lendingLimit = optionalQuantity(res.getLendingLimit());
          const FlavorResource fr{row.flavor, row.resource};
          row.reserved = reserved[q.name][fr];
          row.admitted = admitted[q.name][fr];
          row.reservedUnrepresentable = lostReserved.count({q.name, fr}) != 0;
          row.admittedUnrepresentable = lostAdmitted.count({q.name, fr}) != 0;
          std::optional<Quantity> limit;
          try {
            limit = tree.potentialAvailable(q.name, fr);
          } catch (const std::overflow_error&) {
            ctx.overflow(objectRef("ClusterQueue", "", q.name),
                         "the most " + row.flavor + "/" + row.resource +
                             " may use (nominal quota plus what its cohort can lend)");
          }
          if (limit && !row.reservedUnrepresentable && row.reserved > *limit) {
            ctx.finding("QuotaExceeded", objectRef("ClusterQueue", "", q.name),
                        row.flavor + "/" + row.resource + ": reserved " + row.reserved.toString() +
                            " exceeds the most it may use (" + limit->toString() +
                            ": nominal quota plus what its cohort can lend within "
                            "borrowingLimit/lendingLimit)");
          }
          q.quotas.push_back(std::move(row));
        }
      }
    }
    auto c = counts[q.name];
    q.pending = c[0];
    q.reserved = c[1];
    q.admitted = c[2];
    if (cq.getHasStatus()) {
      checkStatus(ctx, q.name, cq.getFlavorsReservation(), "flavorsReservation", q.quotas, false,
                  reclaimedReserved[q.name]);
      checkStatus(ctx, q.name, cq.getFlavorsUsage(), "flavorsUsage", q.quotas, true,
                  reclaimedAdmitted[q.name]);
    }
    out.push_back(std::move(q));
  }
  // A cohort as a whole cannot hold more than its subtree's quota.
  for (const std::string& root : tree.rootCohorts()) {
    std::set<FlavorResource> resources;
    std::vector<std::pair<std::string, bool>> stack{{root, true}};
    while (!stack.empty()) {
      auto [name, isCohort] = stack.back();
      stack.pop_back();
      if (isCohort) {
        for (const auto& child : tree.children(name)) stack.push_back(child);
      } else {
        for (const auto& [fr, qty] : reserved[name]) resources.insert(fr);
      }
    }
    for (const FlavorResource& fr : resources) {
      Quantity used, quota;
      try {
        used = tree.usage(root, true, fr);
        quota = tree.subtreeQuota(root, true, fr);
      } catch (const std::overflow_error&) {
        ctx.overflow(objectRef("Cohort", "", root),
                     fr.first + "/" + fr.second + ": its queues' usage or its total quota");
        continue;
      }
      if (used > quota) {
        ctx.finding("QuotaExceeded", objectRef("Cohort", "", root),
                    fr.first + "/" + fr.second + ": the cohort's queues reserve " +
                        used.toString() + " beyond its total quota " + quota.toString());
      }
    }
  }
  return out;
}

}  // namespace ledger::replay
