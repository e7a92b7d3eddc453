// Projections of the Kueue APIs (kueue.x-k8s.io v1beta1 and v1beta2).
#include "ingest/project_kinds.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::ingest {

namespace {

// flavorFungibility in v1beta2 spellings: v1beta1's Borrow / Preempt both
// mean "may stop the search here" (MayStopSearch in v1beta2).
std::string fungibility(const std::string& v) {
  if (v == "Borrow" || v == "Preempt") return "MayStopSearch";
  return v;
}

void projectResourceGroups(FieldReader& fr, JsonPtr groups,
                           capnp::List<schema::ResourceGroup>::Builder out) {
  unsigned i = 0;
  for (const Json& g : *groups) {
    auto gb = out[i++];
    if (JsonPtr cov = fr.array(g, "coveredResources", "resourceGroups")) {
      auto l = gb.initCoveredResources(static_cast<unsigned>(cov->size()));
      unsigned j = 0;
      for (const Json& r : *cov) l.set(j++, text(r.is_string() ? r.get<std::string>() : r.dump()));
    }
    JsonPtr flavors = fr.array(g, "flavors", "resourceGroups");
    if (!flavors) continue;
    auto fl = gb.initFlavors(static_cast<unsigned>(flavors->size()));
    unsigned j = 0;
    for (const Json& f : *flavors) {
      auto fb = fl[j++];
      fb.setName(fr.string(f, "name", "flavors"));
      JsonPtr res = fr.array(f, "resources", "flavors");
      if (!res) continue;
      auto rl = fb.initResources(static_cast<unsigned>(res->size()));
      unsigned k = 0;
      for (const Json& r : *res) {
        auto rb = rl[k++];
        rb.setName(fr.string(r, "name", "resources"));
        const std::string at =
            std::string("flavor ") + fb.getName().cStr() + " resource " + rb.getName().cStr();
        // Absent or null stays empty (it used to read "0"): Kueue's CRD
        // requires nominalQuota, so the audit reports it (InvalidQuota).
        if (JsonPtr q = FieldReader::member(r, "nominalQuota")) {
          rb.setNominalQuota(fr.quantityText(*q, at + " nominalQuota"));
        }
        if (JsonPtr q = FieldReader::member(r, "borrowingLimit")) {
          rb.setBorrowingLimit(fr.quantityText(*q, at + " borrowingLimit"));
        }
        if (JsonPtr q = FieldReader::member(r, "lendingLimit")) {
          rb.setLendingLimit(fr.quantityText(*q, at + " lendingLimit"));
        }
      }
    }
  }
}

void projectFlavorUsage(FieldReader& fr, JsonPtr list,
                        capnp::List<schema::FlavorUsage>::Builder out, const char* where) {
  unsigned i = 0;
  for (const Json& f : *list) {
    auto fb = out[i++];
    fb.setName(fr.string(f, "name", where));
    JsonPtr res = fr.array(f, "resources", where);
    if (!res) continue;
    auto rl = fb.initResources(static_cast<unsigned>(res->size()));
    unsigned k = 0;
    for (const Json& r : *res) {
      rl[k].setKey(fr.string(r, "name", where));
      if (JsonPtr total = FieldReader::member(r, "total")) {
        rl[k].setValue(fr.quantityText(*total, std::string(where) + " total"));
      } else {
        rl[k].setValue("0");
      }
      ++k;
    }
  }
}

}  // namespace

void projectConditions(FieldReader& fr, JsonPtr conds,
                       capnp::List<schema::Condition>::Builder out) {
  unsigned i = 0;
  for (const Json& c : *conds) {
    auto b = out[i++];
    b.setType(fr.string(c, "type", "status.conditions"));
    b.setStatus(fr.string(c, "status", "status.conditions"));
    b.setReason(fr.string(c, "reason", "status.conditions"));
    b.setMessage(fr.string(c, "message", "status.conditions"));
    if (auto t = fr.time(c, "lastTransitionTime", "status.conditions")) {
      b.setLastTransitionNs(*t);
    }
  }
}

void projectWorkload(FieldReader& fr, const Json& obj, schema::Workload::Builder out) {
  out.setQuotaReservation(schema::Workload::QuotaReservation::NOT_RESERVED);
  JsonPtr spec = fr.object(obj, "spec", "Workload");
  if (spec.has_value()) {
    out.setQueueName(fr.string(*spec, "queueName", "spec"));
    if (JsonPtr p = FieldReader::member(*spec, "priority")) {
      bool outOfRange = false;
      if (auto v = fr.integerValue(*p, "spec.priority", 32, &outOfRange)) {
        out.setPriority(static_cast<std::int32_t>(*v));
        out.setHasPriority(true);
      }
    }
    out.setActive(fr.boolean(*spec, "active", "spec", true));
    if (JsonPtr podSets = fr.array(*spec, "podSets", "spec")) {
      auto l = out.initPodSets(static_cast<unsigned>(podSets->size()));
      unsigned i = 0;
      for (const Json& ps : *podSets) {
        auto b = l[i++];
        b.setName(fr.string(ps, "name", "spec.podSets"));
        b.setCount(static_cast<std::int32_t>(fr.integer(ps, "count", "spec.podSets", 1, 32)));
        if (JsonPtr podSpec = FieldReader::path(ps, {"template", "spec"})) {
          projectPodSpec(fr, *podSpec, b.initTemplate());
        }
      }
    }
  }
  JsonPtr status = fr.object(obj, "status", "Workload");
  if (!status) return;
  if (JsonPtr conds = fr.array(*status, "conditions", "status")) {
    projectConditions(fr, conds, out.initConditions(static_cast<unsigned>(conds->size())));
    for (const Json& c : *conds) {
      JsonPtr type = FieldReader::member(c, "type");
      JsonPtr st = FieldReader::member(c, "status");
      if (type.has_value() && type->is_string() &&
          type->get<std::string_view>() == "QuotaReserved") {
        const bool reserved =
            st.has_value() && st->is_string() && st->get<std::string_view>() == "True";
        out.setQuotaReservation(reserved ? schema::Workload::QuotaReservation::RESERVED
                                         : schema::Workload::QuotaReservation::NOT_RESERVED);
      }
    }
  }
  if (JsonPtr reclaimable = fr.array(*status, "reclaimablePods", "status")) {
    auto l = out.initReclaimablePods(static_cast<unsigned>(reclaimable->size()));
    unsigned i = 0;
    for (const Json& rp : *reclaimable) {
      auto b = l[i++];
      b.setName(fr.string(rp, "name", "status.reclaimablePods"));
      b.setCount(
          static_cast<std::int32_t>(fr.integer(rp, "count", "status.reclaimablePods", 0, 32)));
    }
  }
  if (JsonPtr adm = fr.object(*status, "admission", "status")) {
    out.setHasAdmission(true);
    out.setAdmissionClusterQueue(fr.string(*adm, "clusterQueue", "status.admission"));
    if (JsonPtr psas = fr.array(*adm, "podSetAssignments", "status.admission")) {
      auto l = out.initPodSetAssignments(static_cast<unsigned>(psas->size()));
      unsigned i = 0;
      for (const Json& psa : *psas) {
        auto b = l[i++];
        b.setName(fr.string(psa, "name", "podSetAssignments"));
        b.setCount(static_cast<std::int32_t>(fr.integer(psa, "count", "podSetAssignments", 0, 32)));
        if (JsonPtr flavors = fr.object(psa, "flavors", "podSetAssignments")) {
          const auto members = flavors->items();
          auto fl = b.initFlavors(static_cast<unsigned>(members.size()));
          unsigned j = 0;
          for (const auto& [resource, flavor] : members) {
            fl[j].setResource(text(resource));
            fl[j].setFlavor(flavor.is_string() ? flavor.get<std::string>() : flavor.dump());
            ++j;
          }
        }
        fillQuantities(fr, FieldReader::member(psa, "resourceUsage"),
                       "podSetAssignments.resourceUsage",
                       [&](unsigned n) { return b.initResourceUsage(n); });
      }
    }
  }
}

void projectClusterQueue(FieldReader& fr, const Json& obj, schema::ClusterQueue::Builder out) {
  if (JsonPtr spec = fr.object(obj, "spec", "ClusterQueue")) {
    std::string cohort = fr.string(*spec, "cohortName", "spec");      // v1beta2
    if (cohort.empty()) cohort = fr.string(*spec, "cohort", "spec");  // v1beta1
    out.setCohort(cohort);
    if (JsonPtr groups = fr.array(*spec, "resourceGroups", "spec")) {
      projectResourceGroups(fr, groups,
                            out.initResourceGroups(static_cast<unsigned>(groups->size())));
    }
    if (JsonPtr ff = fr.object(*spec, "flavorFungibility", "spec")) {
      out.setWhenCanBorrow(fungibility(fr.string(*ff, "whenCanBorrow", "flavorFungibility")));
      out.setWhenCanPreempt(fungibility(fr.string(*ff, "whenCanPreempt", "flavorFungibility")));
    }
    if (JsonPtr pre = fr.object(*spec, "preemption", "spec")) {
      out.setReclaimWithinCohort(fr.string(*pre, "reclaimWithinCohort", "preemption"));
      out.setWithinClusterQueue(fr.string(*pre, "withinClusterQueue", "preemption"));
    }
    out.setStopPolicy(fr.string(*spec, "stopPolicy", "spec"));
  }
  if (JsonPtr status = fr.object(obj, "status", "ClusterQueue")) {
    JsonPtr res = fr.array(*status, "flavorsReservation", "status");
    JsonPtr use = fr.array(*status, "flavorsUsage", "status");
    if (res.has_value() || use.has_value()) out.setHasStatus(true);
    if (res.has_value()) {
      projectFlavorUsage(fr, res, out.initFlavorsReservation(static_cast<unsigned>(res->size())),
                         "status.flavorsReservation");
    }
    if (use.has_value()) {
      projectFlavorUsage(fr, use, out.initFlavorsUsage(static_cast<unsigned>(use->size())),
                         "status.flavorsUsage");
    }
  }
}

void projectCohort(FieldReader& fr, const Json& obj, schema::Cohort::Builder out) {
  JsonPtr spec = fr.object(obj, "spec", "Cohort");
  if (!spec) return;
  std::string parent = fr.string(*spec, "parentName", "spec");
  if (parent.empty()) parent = fr.string(*spec, "parent", "spec");  // v1alpha1
  out.setParent(parent);
  if (JsonPtr groups = fr.array(*spec, "resourceGroups", "spec")) {
    projectResourceGroups(fr, groups,
                          out.initResourceGroups(static_cast<unsigned>(groups->size())));
  }
}

void projectLocalQueue(FieldReader& fr, const Json& obj, schema::LocalQueue::Builder out) {
  if (JsonPtr spec = fr.object(obj, "spec", "LocalQueue")) {
    out.setClusterQueue(fr.string(*spec, "clusterQueue", "spec"));
  }
}

void projectResourceFlavor(FieldReader& fr, const Json& obj, schema::ResourceFlavor::Builder out) {
  JsonPtr spec = fr.object(obj, "spec", "ResourceFlavor");
  if (!spec) return;
  fillStrings(fr, FieldReader::member(*spec, "nodeLabels"), "spec.nodeLabels",
              [&](unsigned n) { return out.initNodeLabels(n); });
  if (JsonPtr taints = fr.array(*spec, "nodeTaints", "spec")) {
    auto l = out.initNodeTaints(static_cast<unsigned>(taints->size()));
    unsigned i = 0;
    for (const Json& t : *taints) {
      l[i].setKey(fr.string(t, "key", "nodeTaints"));
      l[i].setValue(fr.string(t, "value", "nodeTaints"));
      l[i].setEffect(fr.string(t, "effect", "nodeTaints"));
      ++i;
    }
  }
  if (JsonPtr ts = fr.array(*spec, "tolerations", "spec")) {
    auto l = out.initTolerations(static_cast<unsigned>(ts->size()));
    unsigned i = 0;
    for (const Json& t : *ts) {
      l[i].setKey(fr.string(t, "key", "tolerations"));
      l[i].setOperator(fr.string(t, "operator", "tolerations"));
      l[i].setValue(fr.string(t, "value", "tolerations"));
      l[i].setEffect(fr.string(t, "effect", "tolerations"));
      ++i;
    }
  }
}

}  // namespace ledger::ingest
