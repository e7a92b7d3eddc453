// The ResourceClaimTemplate path (Kueue pkg/dra/claims.go
// GetResourceRequestsForResourceClaimTemplates, countDevicesPerClass,
// validateCELSelectorsAgainstDevices).
#include <algorithm>

#include "replay/kueue/dra/workload_charge.h"

namespace ledger::replay::dra {

namespace {

std::string podSetPath(std::size_t i) { return indexed("spec.podSets", i) + ".template.spec"; }

std::int64_t defaultedCount(schema::DeviceRequest::Reader req) {
  // API defaulting (resource/v1 SetDefaults_ExactDeviceRequest): count 1.
  return req.getCount() > 0 ? req.getCount() : 1;
}

// countDevicesPerClass: the first problem ends the template.
bool countDevicesPerClass(capnp::List<schema::DeviceRequest>::Reader requests,
                          cel::SelectorCache& cache, std::map<std::string, std::int64_t>* counts,
                          FieldError* error) {
  for (unsigned i = 0; i < requests.size(); ++i) {
    auto req = requests[i];
    const std::string at = indexed("devices.requests", i);
    if (req.getFirstAvailable()) {
      *error =
          FieldError::invalid(at, std::nullopt, "FirstAvailable device selection is not supported");
      return false;
    }
    if (req.getExactlyUnset()) {
      *error =
          FieldError::invalid(at, std::nullopt, "Exactly must be set if FirstAvailable is nil");
      return false;
    }
    auto selectors = compileSelectors(cache, textList(req.getSelectors()));
    if (!selectors.ok()) {
      const std::string inner =
          FieldError::invalid(
              at + indexed(".exactly.selectors", static_cast<std::size_t>(selectors.failedIndex)) +
                  ".cel.expression",
              selectors.expressions[static_cast<std::size_t>(selectors.failedIndex)],
              "CEL compilation failed: " + selectors.compileError)
              .render();
      *error = FieldError::invalid(at + ".exactly.selectors", std::nullopt, inner);
      return false;
    }
    if (req.getAdminAccess()) continue;  // admin access is not charged
    const std::string mode = req.getAllocationMode().cStr();
    if (mode == "All") {
      *error = FieldError::invalid(at + ".exactly.allocationMode", std::string("All"),
                                   "AllocationMode 'All' is not supported");
      return false;
    }
    if (!mode.empty() && mode != "ExactCount") {
      *error = FieldError::invalid(at + ".exactly.allocationMode", mode,
                                   "unsupported allocation mode: " + mode);
      return false;
    }
    // An exact request of no class (API validation requires one) is counted
    // for nothing: countDevicesPerClass's `if dc == "" { continue }`.
    if (req.getDeviceClassName().size() == 0) continue;
    auto& n = (*counts)[req.getDeviceClassName().cStr()];
    const std::int64_t add = defaultedCount(req);
    n = n > INT64_MAX - add ? INT64_MAX : n + add;  // saturating, as upstream
  }
  return true;
}

// validateCELSelectorsAgainstDevices: can the devices the cluster publishes
// satisfy each request that has CEL selectors? A device serves one request.
std::vector<FieldError> validateSelectorsAgainstDevices(
    DraContext& ctx, capnp::List<schema::DeviceRequest>::Reader requests, const std::string& base) {
  std::vector<unsigned> celRequests;
  bool needAll = false;
  std::vector<std::string> drivers;
  for (unsigned i = 0; i < requests.size(); ++i) {
    auto req = requests[i];
    if (req.getFirstAvailable()) continue;
    bool hasCel = false;
    for (auto s : req.getSelectors()) hasCel |= s.size() > 0;
    if (!hasCel) continue;
    celRequests.push_back(i);
    const std::string cls = req.getDeviceClassName().cStr();
    const auto& counters = ctx.mapper.counters(cls);
    const auto& capacities = ctx.mapper.capacities(cls);
    if (counters.empty() && capacities.empty()) needAll = true;
    auto addDriver = [&](const std::string& d) {
      if (std::find(drivers.begin(), drivers.end(), d) == drivers.end()) drivers.push_back(d);
    };
    for (const auto& c : counters) addDriver(c.driver);
    for (const auto& c : capacities) addDriver(c.driver);
  }
  std::vector<FieldError> errors;
  if (celRequests.empty()) return errors;
  std::vector<const CatalogDevice*> devices;
  ctx.catalogRead = true;
  for (const auto& d : ctx.catalog.allDevices()) {
    if (needAll || std::find(drivers.begin(), drivers.end(), d.driver) != drivers.end()) {
      devices.push_back(&d);
    }
  }
  std::vector<bool> matched(devices.size(), false);
  for (unsigned i : celRequests) {
    auto req = requests[i];
    const std::string at = base + indexed(".devices.requests", i);
    const std::string cls = req.getDeviceClassName().cStr();
    SelectorSet classSelectors;
    if (!cls.empty()) {
      const StoredObject* dc = ctx.state.find(ObjectKind::kDeviceClass, cls);
      if (dc == nullptr) {
        errors.push_back(
            FieldError::internal(at, "failed to get DeviceClass " + cls + ": " +
                                         apiNotFound("deviceclasses.resource.k8s.io", cls)));
        continue;
      }
      classSelectors = compileSelectors(
          ctx.selectors, textList(dc->projection().getBody().getDeviceClass().getSelectors()));
      if (!classSelectors.ok()) {
        const auto k = static_cast<std::size_t>(classSelectors.failedIndex);
        errors.push_back(FieldError::invalid(
            indexed(at, k) + ".cel.expression", classSelectors.expressions[k],
            "DeviceClass " + cls + " has invalid CEL selector: " + classSelectors.compileError));
        continue;
      }
    }
    auto requestSelectors = compileSelectors(ctx.selectors, textList(req.getSelectors()));
    const std::int64_t want = defaultedCount(req);
    std::int64_t found = 0;
    bool failed = false;
    for (std::size_t d = 0; d < devices.size() && found < want; ++d) {
      if (matched[d]) continue;
      cel::EvalResult r = matchSelectors(classSelectors, *devices[d]);
      if (r.ok() && r.matched) r = matchSelectors(requestSelectors, *devices[d]);
      if (!r.ok()) {
        errors.push_back(
            FieldError::invalid(at + ".exactly.selectors", std::nullopt,
                                "CEL evaluation failed for DeviceClass " + cls + ": " + r.error));
        failed = true;
        break;
      }
      if (r.matched) {
        matched[d] = true;
        ++found;
      }
    }
    if (!failed && found < want) {
      errors.push_back(FieldError::internal(
          at + ".exactly.selectors",
          "insufficient matching devices for CEL selector in DeviceClass " + cls + ": " +
              std::to_string(found) + " device(s) match in the cluster but " +
              std::to_string(want) + " requested"));
    }
  }
  return errors;
}

}  // namespace

void chargeClaimTemplates(DraContext& ctx, const std::string& ns, schema::Workload::Reader wl,
                          WorkloadCharge& out) {
  auto podSets = wl.getPodSets();
  for (unsigned i = 0; i < podSets.size(); ++i) {
    auto ps = podSets[i];
    const std::string psName = ps.getName().cStr();
    ResourceList charged;
    auto claims = ps.getTemplate().getResourceClaims();
    for (unsigned j = 0; j < claims.size(); ++j) {
      const std::string tmplName = claims[j].getResourceClaimTemplateName().cStr();
      if (tmplName.empty()) continue;
      const std::string base = podSetPath(i) + indexed(".resourceClaims", j);
      const StoredObject* tmpl = ctx.state.find(ObjectKind::kResourceClaimTemplate, ns, tmplName);
      if (tmpl == nullptr) {
        out.errors.push_back(FieldError::internal(
            base, "failed to get claim spec for ResourceClaimTemplate " + tmplName + " in podset " +
                      psName + ": " +
                      apiNotFound("resourceclaimtemplates.resource.k8s.io", tmplName)));
        return;
      }
      auto requests = tmpl->projection().getBody().getResourceClaimTemplate().getRequests();
      const std::string prefix = "ResourceClaimTemplate " + tmplName + ": ";
      std::map<std::string, std::int64_t> counts;
      FieldError error;
      if (!countDevicesPerClass(requests, ctx.selectors, &counts, &error)) {
        error.field = base + "." + error.field;
        error.detail = prefix + error.detail;
        out.errors.push_back(std::move(error));
        return;
      }
      auto celErrors = validateSelectorsAgainstDevices(ctx, requests, base);
      if (!celErrors.empty()) {
        for (auto& e : celErrors) {
          e.detail = prefix + e.detail;
          out.errors.push_back(std::move(e));
        }
        return;
      }
      for (const auto& [cls, n] : counts) {
        auto resource = ctx.mapper.lookup(cls);
        if (!resource) {
          FieldError e = FieldError::notFound(
              base + ".resourceClaimTemplateName",
              "DeviceClass " + cls + " is not mapped in DRA configuration for podset " + psName);
          e.unmappedDeviceClass = cls;
          out.errors.push_back(std::move(e));
          return;
        }
        // Counter- and capacity-configured classes are charged by those paths.
        if (ctx.mapper.hasSources(cls)) continue;
        addInto(charged, ResourceList{{*resource, Quantity::fromInt(n)}});
      }
    }
    if (!charged.empty()) addInto(out.podSets[psName].perPod, charged);
  }
}

}  // namespace ledger::replay::dra
