// Per-workload audit: state as Kueue defines it (Finished > Admitted >
// QuotaReserved > Pending), `recorded` from status.admission, `computed` as
// Kueue charged it when it reserved quota (pkg/workload
// totalRequestsFromPodSets with the DRA charge of pkg/dra, on the inputs of
// that moment: charge_at_reservation.h), `current` where today's inputs
// charge otherwise, and the ChargeMismatch / ChargeDrift /
// UnmappedDeviceClass findings.
#include "replay/kueue/audit.h"
#include "replay/kueue/workload_requests.h"

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
      dra{s, mapper, catalog, selectors, matches, false},
      atReservation(s) {}

void AuditContext::overflow(std::string object, const std::string& what) {
  finding("QuantityOverflow", std::move(object),
          what + " is past the exact range of quantities (about +-1.7e29 units) in the state at " +
              "seq " + std::to_string(state.seq()) + "; left out of the report");
}

namespace {

std::vector<std::string> rendered(const std::vector<dra::FieldError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.render());
  return out;
}

void computeCharges(AuditContext& ctx, WorkloadAudit& a, schema::Workload::Reader wl,
                    const StoredObject* cq) {
  WorkloadReport& r = a.report;
  ctx.dra.catalogRead = false;
  WorkloadRequests today = workloadRequests(ctx.dra, r.ns, wl, cq);
  const bool readDevices = ctx.dra.catalogRead;
  const ChargeHistory::Reservation reservation =
      ctx.state.chargeHistory().reservedAt(ClusterState::key(r.ns, r.name));
  WorkloadRequests atReservation;
  bool drifted = false;
  if (reservation.seq == 0) {
    // Not reserved: what Kueue would charge it now.
    r.computedAtSeq = ctx.state.seq();
    r.computedAtNs = ctx.state.timeNs();
  } else {
    r.computedAtSeq = reservation.seq;
    r.computedAtNs = reservation.timeNs;
    r.computedAtSnapshot = reservation.snapshot;
    r.reservedAtNs = reservation.reservedAtNs;
    if (ctx.atReservation.changedAfter(reservation.seq, r.ns, wl, readDevices)) {
      atReservation = workloadRequests(ctx.atReservation.contextAt(reservation.seq, ctx.selectors),
                                       r.ns, wl, cq);
      drifted = atReservation.total() != today.total() ||
                rendered(atReservation.draErrors) != rendered(today.draErrors);
    }
  }
  const WorkloadRequests& computed = drifted ? atReservation : today;
  r.errors = rendered(computed.draErrors);
  for (const auto& e : computed.draErrors) {
    if (!e.unmappedDeviceClass.empty()) {
      ctx.finding("UnmappedDeviceClass", objectRef("Workload", r.ns, r.name),
                  "DeviceClass " + e.unmappedDeviceClass +
                      " is not mapped in the DRA configuration (deviceClassMappings)");
    }
  }
  r.computed = computed.total();
  for (const auto& p : computed.problems) {
    ctx.finding("MalformedQuantity", objectRef("Workload", r.ns, r.name), p);
  }
  if (!drifted) return;
  r.hasCurrent = true;
  r.currentComputed = today.total();
  r.currentErrors = rendered(today.draErrors);
  std::string charges;
  for (const auto& [n, q] : r.computed)
    charges += (charges.empty() ? "" : ", ") + n + "=" + q.toString();
  std::string now;
  for (const auto& [n, q] : r.currentComputed)
    now += (now.empty() ? "" : ", ") + n + "=" + q.toString();
  if (!r.currentErrors.empty())
    now += (now.empty() ? "" : "; ") + std::string("errors: ") + r.currentErrors.front();
  ctx.finding("ChargeDrift", objectRef("Workload", r.ns, r.name),
              "charged {" + charges + "} at its reservation, seq " +
                  std::to_string(reservation.seq) + "; today's state charges {" + now + "}: " +
                  ctx.atReservation.describeChangesAfter(reservation.seq, r.ns, wl, readDevices));
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
    } else if (const StoredObject* lq =
                   ctx.state.find(ObjectKind::kLocalQueue, r.ns, r.localQueue)) {
      r.clusterQueue = lq->projection().getBody().getLocalQueue().getClusterQueue().cStr();
    }
    for (auto o : obj->projection().getOwnerReferences()) a.uids.emplace_back(o.getUid().cStr());
    const StoredObject* cq = ctx.state.find(ObjectKind::kClusterQueue, r.clusterQueue);
    try {
      if (wl.getHasAdmission()) {
        std::vector<std::string> problems;
        r.recorded = recordedUsage(wl, &problems);
        a.usage = admissionUsage(wl, nullptr);
        for (const auto& p : problems)
          ctx.finding("MalformedQuantity", objectRef("Workload", r.ns, r.name), p);
      }
      computeCharges(ctx, a, wl, cq);
      checkChargeMismatch(ctx, a, cq);
    } catch (const std::overflow_error&) {
      // A pod set's count times its requests, or the sum over pod sets,
      // past the exact range: its charges are left out, the report goes on.
      r.recorded.clear();
      r.computed.clear();
      r.hasCurrent = false;
      r.currentComputed.clear();
      a.usage.clear();
      ctx.overflow(objectRef("Workload", r.ns, r.name),
                   "a sum of its charges (recorded, computed, its usage of the queue)");
    }
    for (auto p : obj->projection().getProblems()) {
      ctx.finding("MalformedObject", objectRef("Workload", r.ns, r.name), p.cStr());
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace ledger::replay
