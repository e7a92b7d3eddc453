// PodSpec projection, shared by Pods and the pod templates of Workload pod sets.
#include "ingest/json_fields.h"

namespace ledger::ingest {

namespace {

void projectContainers(FieldReader& fr, JsonPtr list, const char* where,
                       capnp::List<schema::Container>::Builder out) {
  unsigned i = 0;
  for (const Json& c : *list) {
    auto b = out[i++];
    if (!c.is_object()) {
      fr.problem(std::string(where) + " entry is not an object");
      continue;
    }
    b.setName(fr.string(c, "name", where));
    b.setRestartPolicy(fr.string(c, "restartPolicy", where));
    if (JsonPtr res = fr.object(c, "resources", where)) {
      const std::string at = std::string(where) + "." + b.getName().cStr() + ".resources";
      fillQuantities(fr, FieldReader::member(*res, "requests"), at + ".requests",
                     [&](unsigned n) { return b.initRequests(n); });
      fillQuantities(fr, FieldReader::member(*res, "limits"), at + ".limits",
                     [&](unsigned n) { return b.initLimits(n); });
      if (JsonPtr claims = fr.array(*res, "claims", at.c_str())) {
        auto cl = b.initClaims(static_cast<unsigned>(claims->size()));
        unsigned j = 0;
        for (const Json& claim : *claims) cl.set(j++, text(fr.string(claim, "name", at.c_str())));
      }
    }
  }
}

}  // namespace

void projectPodSpec(FieldReader& fr, const Json& spec, schema::PodSpec::Builder out) {
  if (!spec.is_object()) {
    fr.problem("pod spec is not an object");
    return;
  }
  if (JsonPtr cs = fr.array(spec, "containers", "spec")) {
    projectContainers(fr, cs, "spec.containers",
                      out.initContainers(static_cast<unsigned>(cs->size())));
  }
  if (JsonPtr cs = fr.array(spec, "initContainers", "spec")) {
    projectContainers(fr, cs, "spec.initContainers",
                      out.initInitContainers(static_cast<unsigned>(cs->size())));
  }
  fillQuantities(fr, FieldReader::member(spec, "overhead"), "spec.overhead",
                 [&](unsigned n) { return out.initOverhead(n); });
  if (JsonPtr rcs = fr.array(spec, "resourceClaims", "spec")) {
    auto l = out.initResourceClaims(static_cast<unsigned>(rcs->size()));
    unsigned i = 0;
    for (const Json& rc : *rcs) {
      auto b = l[i++];
      b.setName(fr.string(rc, "name", "spec.resourceClaims"));
      b.setResourceClaimTemplateName(
          fr.string(rc, "resourceClaimTemplateName", "spec.resourceClaims"));
      b.setResourceClaimName(fr.string(rc, "resourceClaimName", "spec.resourceClaims"));
    }
  }
  fillStrings(fr, FieldReader::member(spec, "nodeSelector"), "spec.nodeSelector",
              [&](unsigned n) { return out.initNodeSelector(n); });
  if (JsonPtr ts = fr.array(spec, "tolerations", "spec")) {
    auto l = out.initTolerations(static_cast<unsigned>(ts->size()));
    unsigned i = 0;
    for (const Json& t : *ts) {
      auto b = l[i++];
      b.setKey(fr.string(t, "key", "spec.tolerations"));
      b.setOperator(fr.string(t, "operator", "spec.tolerations"));
      b.setValue(fr.string(t, "value", "spec.tolerations"));
      b.setEffect(fr.string(t, "effect", "spec.tolerations"));
    }
  }
  if (JsonPtr terms = FieldReader::path(
          spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                 "nodeSelectorTerms"})) {
    if (terms->is_array()) {
      auto l = out.initRequiredNodeAffinity(static_cast<unsigned>(terms->size()));
      unsigned i = 0;
      for (const Json& term : *terms) {
        auto b = l[i++];
        JsonPtr exprs = FieldReader::member(term, "matchExpressions");
        if (!exprs || !exprs->is_array()) continue;
        auto el = b.initMatchExpressions(static_cast<unsigned>(exprs->size()));
        unsigned j = 0;
        for (const Json& e : *exprs) {
          auto eb = el[j++];
          eb.setKey(fr.string(e, "key", "nodeSelectorTerms"));
          eb.setOperator(fr.string(e, "operator", "nodeSelectorTerms"));
          if (JsonPtr vals = fr.array(e, "values", "nodeSelectorTerms")) {
            auto vl = eb.initValues(static_cast<unsigned>(vals->size()));
            unsigned k = 0;
            for (const Json& v : *vals)
              vl.set(k++, text(v.is_string() ? v.get<std::string>() : v.dump()));
          }
        }
      }
    }
  }
  out.setPriorityClassName(fr.string(spec, "priorityClassName", "spec"));
}

}  // namespace ledger::ingest
