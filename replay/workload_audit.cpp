// Per-workload audit: state as Kueue defines it (Finished > Admitted >
// QuotaReserved > Pending), `recorded` from status.admission, `computed` as
// Kueue would charge it now (pkg/workload totalRequestsFromPodSets with the
// DRA charge of pkg/dra), and ChargeMismatch / UnmappedDeviceClass findings.
#include "audit.h"
#include "workload_requests.h"

namespace ledger::replay {

std::string objectRef(const char* kind, std::string_view ns, std::string_view name) {
  std::string ref(kind);
  ref += ' ';
  if (!ns.empty()) ref.append(ns).push_back('/');
  ref.append(name);
  return ref;
}

AuditContext::AuditContext(const ClusterState& s)
    : state(s),
      mapper(s.draConfig() != nullptr
                 ? dra::ResourceMapper(s.draConfig()->projection().getBody().getDraConfig())
                 : dra::ResourceMapper()),
      catalog(s),
      dra{s, mapper, catalog, selectors, matches} {}

namespace {

void computeCharges(AuditContext& ctx, WorkloadAudit& a, schema::Workload::Reader wl,
                    const StoredObject* cq) {
  WorkloadRequests requests = workloadRequests(ctx.dra, a.report.ns, wl, cq);
  for (const auto& e : requests.draErrors) {
    a.report.errors.push_back(e.render());
    if (!e.unmappedDeviceClass.empty()) {
      ctx.finding("UnmappedDeviceClass", objectRef("Workload", a.report.ns, a.report.name),
                  "DeviceClass " + e.unmappedDeviceClass +
                      " is not mapped in the DRA configuration (deviceClassMappings)");
    }
  }
  a.report.computed = requests.total();
  for (const auto& p : requests.problems) {
    ctx.finding("MalformedQuantity", objectRef("Workload", a.report.ns, a.report.name), p);
  }
}

void checkChargeMismatch(AuditContext& ctx, const WorkloadAudit& a, const StoredObject* cq) {
  if (a.report.recorded.empty()) return;
  std::set<std::string> names;
  for (const auto& [n, q] : a.report.recorded) names.insert(n);
  for (const auto& [n, q] : a.report.computed) {
    // Kueue only records resources the ClusterQueue covers; with a DRA error
    // the DRA resources are absent from `computed`, and the error says why.
    if (coversResource(cq, n)) names.insert(n);
  }
  for (const auto& n : names) {
    auto r = a.report.recorded.find(n);
    auto c = a.report.computed.find(n);
    if (c == a.report.computed.end() && !a.report.errors.empty()) continue;
    const Quantity recorded = r == a.report.recorded.end() ? Quantity() : r->second;
    const Quantity computed = c == a.report.computed.end() ? Quantity() : c->second;
    if (kueueValue(n, recorded) != kueueValue(n, computed)) {
      ctx.finding("ChargeMismatch", objectRef("Workload", a.report.ns, a.report.name),
                  n + ": recorded " + recorded.toString() + ", computed " + computed.toString());
    }
  }
}

}  // namespace

std::vector<WorkloadAudit> auditWorkloads(AuditContext& ctx) {
  std::vector<WorkloadAudit> out;
  for (const auto& [key, obj] : ctx.state.objects(ObjectKind::kWorkload)) {
    auto wl = obj->projection().getBody().getWorkload();
    WorkloadAudit a;
    a.object = obj.get();
    WorkloadReport& r = a.report;
    r.ns = obj->ns();
    r.name = obj->name();
    r.uid = obj->uid();
    r.localQueue = wl.getQueueName().cStr();
    r.priority = wl.getPriority();
    const WorkloadConditions conds = conditionsOf(wl);
    r.finished = conds.finished;
    r.admitted = conds.admitted;
    r.quotaReserved = conds.quotaReserved;
    r.state = conds.state();
    if (wl.getHasAdmission()) {
      r.clusterQueue = wl.getAdmissionClusterQueue().cStr();
      std::vector<std::string> problems;
      r.recorded = recordedUsage(wl, &problems);
      a.usage = admissionUsage(wl, nullptr);
      for (const auto& p : problems)
        ctx.finding("MalformedQuantity", objectRef("Workload", r.ns, r.name), p);
    } else if (const StoredObject* lq =
                   ctx.state.find(ObjectKind::kLocalQueue, r.ns, r.localQueue)) {
      r.clusterQueue = lq->projection().getBody().getLocalQueue().getClusterQueue().cStr();
    }
    for (auto o : obj->projection().getOwnerReferences()) a.uids.emplace_back(o.getUid().cStr());
    const StoredObject* cq = ctx.state.find(ObjectKind::kClusterQueue, r.clusterQueue);
    computeCharges(ctx, a, wl, cq);
    checkChargeMismatch(ctx, a, cq);
    for (auto p : obj->projection().getProblems()) {
      ctx.finding("MalformedObject", objectRef("Workload", r.ns, r.name), p.cStr());
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace ledger::replay
