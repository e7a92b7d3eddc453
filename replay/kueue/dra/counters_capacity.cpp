// Partitionable devices and consumable capacity (Kueue pkg/dra/counters.go
// GetCounterResourcesForWorkload and capacity.go
// DetermineCapacityResourcesForWorkload): charge the largest counter /
// capacity value among the devices a request could get, times its count.
#include "replay/kueue/dra/workload_charge.h"

namespace ledger::replay::dra {

namespace {

// Kueue's SafeValue: an integer, rounded away from zero, clamped to int64.
std::int64_t safeValue(const Quantity& q) {
  const Int128 n = q.nanos();
  Int128 v = n / 1000000000;
  if (n % 1000000000 != 0) v += n > 0 ? 1 : -1;
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<std::int64_t>(v);
}

std::int64_t saturatingMul(std::int64_t a, std::int64_t b) {
  const Int128 r = static_cast<Int128>(a) * b;
  if (r > INT64_MAX) return INT64_MAX;
  if (r < INT64_MIN) return INT64_MIN;
  return static_cast<std::int64_t>(r);
}

// Per-request selectors shared by the counter and capacity paths
// (prepareDeviceSelectors). Returns false with an error appended.
bool prepareSelectors(DraContext& ctx, schema::DeviceRequest::Reader req,
                      const std::string& reqPath, SelectorSet* classSel, SelectorSet* reqSel,
                      std::vector<FieldError>& errors) {
  const std::string cls = req.getDeviceClassName().cStr();
  if (!cls.empty()) {
    const StoredObject* dc = ctx.state.find(ObjectKind::kDeviceClass, cls);
    if (dc == nullptr) {
      errors.push_back(
          FieldError::internal(reqPath, "failed to get DeviceClass " + cls + ": " +
                                            apiNotFound("deviceclasses.resource.k8s.io", cls)));
      return false;
    }
    *classSel = compileSelectors(
        ctx.selectors, textList(dc->projection().getBody().getDeviceClass().getSelectors()));
    if (!classSel->ok()) {
      const auto k = static_cast<std::size_t>(classSel->failedIndex);
      errors.push_back(FieldError::invalid(
          indexed(reqPath, k) + ".cel.expression", classSel->expressions[k],
          "DeviceClass " + cls + " has invalid CEL selector: " + classSel->compileError));
      return false;
    }
  }
  *reqSel = compileSelectors(ctx.selectors, textList(req.getSelectors()));
  if (!reqSel->ok()) {
    const auto k = static_cast<std::size_t>(reqSel->failedIndex);
    errors.push_back(FieldError::invalid(
        reqPath + indexed(".exactly.selectors", k) + ".cel.expression", reqSel->expressions[k],
        "CEL compilation failed: " + reqSel->compileError));
    return false;
  }
  return true;
}

// matchDevicesForSource: complete pools of the driver, newest generation;
// source selector, then DeviceClass selectors, then request selectors.
DeviceMatch evaluateMatch(DraContext& ctx, const std::string& driver,
                          const std::string& sourceSelector, const SelectorSet& classSel,
                          const SelectorSet& reqSel, const std::string& reqPath) {
  DeviceMatch out;
  SelectorSet srcSel = compileSelectors(ctx.selectors, {sourceSelector});
  if (!srcSel.ok()) {
    out.ok = false;
    out.errors.push_back(
        FieldError::invalid(indexed(reqPath, 0) + ".cel.expression", sourceSelector,
                            "deviceSelector CEL compilation failed: " + srcSel.compileError));
    return out;
  }
  for (const CatalogDevice* d : ctx.catalog.completePoolDevices(driver)) {
    struct Stage {
      const SelectorSet* set;
      const char* what;
    };
    const Stage stages[] = {{&srcSel, "deviceSelector"},
                            {&classSel, "DeviceClass selector"},
                            {&reqSel, "request selector"}};
    bool all = true;
    for (const Stage& s : stages) {
      cel::EvalResult r = matchSelectors(*s.set, *d);
      if (!r.ok()) {
        out.ok = false;
        out.devices.clear();
        out.errors.push_back(FieldError::internal(
            reqPath, std::string("CEL evaluation error in ") + s.what + " for device " +
                         std::string(d->name) + ": " + r.error));
        return out;
      }
      if (!r.matched) {
        all = false;
        break;
      }
    }
    if (all) out.devices.push_back(d);
  }
  return out;
}

// The same question gets the same answer while the catalog stands: asked
// once per driver, selectors and request path (see DeviceMatch).
const DeviceMatch& matchDevices(DraContext& ctx, const std::string& driver,
                                const std::string& sourceSelector, const SelectorSet& classSel,
                                const SelectorSet& reqSel, const std::string& reqPath) {
  std::string key = driver;
  for (const std::string* part : {&sourceSelector, &reqPath}) {
    key.push_back('\0');
    key += *part;
  }
  for (const SelectorSet* set : {&classSel, &reqSel}) {
    key.push_back('\1');
    for (const std::string& e : set->expressions) {
      key.push_back('\0');
      key += e;
    }
  }
  ctx.catalogRead = true;
  auto it = ctx.matches.find(key);
  if (it == ctx.matches.end()) {
    it = ctx.matches
             .emplace(std::move(key),
                      evaluateMatch(ctx, driver, sourceSelector, classSel, reqSel, reqPath))
             .first;
  }
  return it->second;
}

// The devices matching a request, when there are at least `count` of them
// (processCounterCharge / processCapacityCharge); otherwise nullptr, with
// the error appended. `source` is "counter" or "capacity", as upstream says.
const DeviceMatch* matchAtLeast(DraContext& ctx, const std::string& driver,
                                const std::string& sourceSelector, const SelectorSet& classSel,
                                const SelectorSet& reqSel, const std::string& reqPath,
                                std::int64_t count, const char* source,
                                std::vector<FieldError>& errors) {
  const DeviceMatch& m = matchDevices(ctx, driver, sourceSelector, classSel, reqSel, reqPath);
  if (!m.ok) {
    errors.insert(errors.end(), m.errors.begin(), m.errors.end());
    return nullptr;
  }
  if (static_cast<std::int64_t>(m.devices.size()) < count) {
    errors.push_back(FieldError::internal(
        reqPath, std::string("insufficient matching devices for ") + source +
                     " driver: " + std::to_string(m.devices.size()) + " device(s) match but " +
                     std::to_string(count) + " requested"));
    return nullptr;
  }
  return &m;
}

// The largest value of the counter across every counter set of every matched
// device (computeCounterCharges), once per match and counter.
const std::optional<Quantity>& counterMaximum(const DeviceMatch& m, const std::string& counter) {
  auto it = m.counterMaximum.find(counter);
  if (it != m.counterMaximum.end()) return it->second;
  std::optional<Quantity> best;
  for (const CatalogDevice* d : m.devices) {
    for (auto consumption : d->device.getConsumesCounters()) {
      for (auto c : consumption.getCounters()) {
        if (c.getKey() != counter) continue;
        auto q = Quantity::tryParse(c.getValue().cStr());
        if (q && (!best || *q > *best)) best = *q;
      }
    }
  }
  return m.counterMaximum.emplace(counter, best).first->second;
}

std::int64_t requestCount(schema::DeviceRequest::Reader req) { return req.getCount(); }

// Walks every template request of every pod set, calling `charge` for those
// whose class the predicate selects. Stops at the first error.
template <typename Fn>
void forEachTemplateRequest(DraContext& ctx, const std::string& ns, schema::Workload::Reader wl,
                            WorkloadCharge& out, Fn charge) {
  auto podSets = wl.getPodSets();
  for (unsigned i = 0; i < podSets.size(); ++i) {
    auto ps = podSets[i];
    ResourceList charged;
    auto claims = ps.getTemplate().getResourceClaims();
    for (unsigned j = 0; j < claims.size(); ++j) {
      const std::string tmplName = claims[j].getResourceClaimTemplateName().cStr();
      if (tmplName.empty()) continue;
      const std::string claimPath =
          indexed("spec.podSets", i) + ".template.spec" + indexed(".resourceClaims", j);
      const StoredObject* tmpl = ctx.state.find(ObjectKind::kResourceClaimTemplate, ns, tmplName);
      if (tmpl == nullptr) {
        out.errors.push_back(FieldError::internal(
            claimPath, "failed to get claim spec for ResourceClaimTemplate " + tmplName + ": " +
                           apiNotFound("resourceclaimtemplates.resource.k8s.io", tmplName)));
        return;
      }
      auto requests = tmpl->projection().getBody().getResourceClaimTemplate().getRequests();
      for (unsigned r = 0; r < requests.size(); ++r) {
        auto req = requests[r];
        // `req.Exactly == nil || isAdminAccessRequest(req.Exactly)`.
        if (req.getFirstAvailable() || req.getExactlyUnset() || req.getAdminAccess()) continue;
        const std::string reqPath = claimPath + indexed(".devices.requests", r);
        if (!charge(req, reqPath, charged, out.errors)) return;
      }
    }
    if (!charged.empty()) addInto(out.podSets[ps.getName().cStr()].perPod, charged);
  }
}

}  // namespace

void chargeCounters(DraContext& ctx, const std::string& ns, schema::Workload::Reader wl,
                    WorkloadCharge& out) {
  forEachTemplateRequest(
      ctx, ns, wl, out,
      [&](schema::DeviceRequest::Reader req, const std::string& reqPath, ResourceList& charged,
          std::vector<FieldError>& errors) {
        const auto& configs = ctx.mapper.counters(req.getDeviceClassName().cStr());
        if (configs.empty()) return true;
        SelectorSet classSel, reqSel;
        if (!prepareSelectors(ctx, req, reqPath, &classSel, &reqSel, errors)) return false;
        const std::int64_t count = requestCount(req);
        for (const CounterSourceConfig& cc : configs) {
          const DeviceMatch* m = matchAtLeast(ctx, cc.driver, cc.deviceSelector, classSel, reqSel,
                                              reqPath, count, "counter", errors);
          if (m == nullptr) return false;
          const std::optional<Quantity>& best = counterMaximum(*m, cc.counterName);
          if (!best) {
            errors.push_back(FieldError::internal(
                reqPath, "matched devices have no consumesCounters entry for counter \"" +
                             cc.counterName + "\""));
            return false;
          }
          std::int64_t v = safeValue(*best);
          if (v < 0) v = 0;  // upstream clamps negative driver values to 0
          if (count > 1) v = saturatingMul(v, count);
          addInto(charged, ResourceList{{cc.quotaResource,
                                         Quantity::fromInt(v, Quantity::Format::kBinarySI)}});
        }
        return true;
      });
}

namespace {

// roundToPolicy (capacity.go): validValues take precedence over validRange.
std::optional<Quantity> roundToPolicy(const Quantity& base, schema::DeviceCapacity::Reader dim) {
  if (!dim.getHasRequestPolicy()) return base;
  auto policy = dim.getRequestPolicy();
  if (policy.getValidValues().size() > 0) {
    for (auto v : policy.getValidValues()) {
      auto q = Quantity::tryParse(v.cStr());
      if (q && *q >= base) return *q;
    }
    return std::nullopt;  // "request exceeds all valid values"
  }
  if (!policy.getHasValidRange()) return base;
  std::int64_t val = safeValue(base);
  auto min = Quantity::tryParse(policy.getRangeMin().cStr());
  auto max = Quantity::tryParse(policy.getRangeMax().cStr());
  auto step = Quantity::tryParse(policy.getRangeStep().cStr());
  if (min) val = std::max(val, safeValue(*min));
  if (step && min) {
    const std::int64_t s = safeValue(*step);
    const std::int64_t lo = safeValue(*min);
    if (s > 0) {
      const std::int64_t off = val - lo;
      if (off % s != 0) val = lo + (off / s + 1) * s;
    }
  }
  if (max && val > safeValue(*max)) return std::nullopt;
  return Quantity::fromInt(val, base.format());
}

}  // namespace

void chargeCapacity(DraContext& ctx, const std::string& ns, schema::Workload::Reader wl,
                    WorkloadCharge& out) {
  forEachTemplateRequest(
      ctx, ns, wl, out,
      [&](schema::DeviceRequest::Reader req, const std::string& reqPath, ResourceList& charged,
          std::vector<FieldError>& errors) {
        const std::string cls = req.getDeviceClassName().cStr();
        const auto& configs = ctx.mapper.capacities(cls);
        if (configs.empty()) return true;
        auto quotaResource = ctx.mapper.lookup(cls);
        if (!quotaResource) return true;
        SelectorSet classSel, reqSel;
        if (!prepareSelectors(ctx, req, reqPath, &classSel, &reqSel, errors)) return false;
        const std::int64_t count = requestCount(req);
        for (const CapacitySourceConfig& cfg : configs) {
          const DeviceMatch* m = matchAtLeast(ctx, cfg.driver, cfg.deviceSelector, classSel, reqSel,
                                              reqPath, count, "capacity", errors);
          if (m == nullptr) return false;
          const std::vector<const CatalogDevice*>& matched = m->devices;
          std::optional<Quantity> explicitRequest;
          for (auto c : req.getCapacityRequests()) {
            if (c.getName() == cfg.capacityName)
              explicitRequest = Quantity::tryParse(c.getValue().cStr());
          }
          bool hasDimension = false;
          std::optional<Quantity> best;
          for (const CatalogDevice* d : matched) {
            for (auto dim : d->device.getCapacity()) {
              if (dim.getName() != cfg.capacityName) continue;
              hasDimension = true;
              std::optional<Quantity> base = explicitRequest;
              if (!base && dim.getHasRequestPolicy() &&
                  dim.getRequestPolicy().getDefault().size() > 0) {
                base = Quantity::tryParse(dim.getRequestPolicy().getDefault().cStr());
              }
              if (!base) base = Quantity::tryParse(dim.getValue().cStr());
              if (!base) continue;
              auto rounded = roundToPolicy(*base, dim);
              if (rounded && (!best || *rounded > *best)) best = rounded;
            }
          }
          if (!hasDimension) {
            errors.push_back(FieldError::internal(
                reqPath,
                "matched devices have no capacity dimension \"" + cfg.capacityName + "\""));
            return false;
          }
          if (!best) {
            errors.push_back(FieldError::invalid(
                reqPath, std::nullopt,
                "capacity request cannot be satisfied by any matched device's RequestPolicy for "
                "dimension \"" +
                    cfg.capacityName + "\""));
            return false;
          }
          std::int64_t v = safeValue(*best);
          if (v < 0) v = 0;
          if (count > 1) v = saturatingMul(v, count);
          addInto(charged, ResourceList{{*quotaResource,
                                         Quantity::fromInt(v, Quantity::Format::kBinarySI)}});
        }
        return true;
      });
}

}  // namespace ledger::replay::dra
