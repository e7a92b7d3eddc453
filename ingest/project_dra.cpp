// Projections of resource.k8s.io DRA objects. v1 and v1beta2 nest a request's
// fields under `exactly`; v1beta1 puts them on the request itself and wraps a
// device's fields in `basic`. Both shapes are accepted.
#include "ingest/project_kinds.h"

namespace ledger::ingest {

namespace {

template <typename InitFn>
void fillCel(FieldReader& fr, JsonPtr selectors, const char* where, InitFn init) {
  if (!selectors) return;
  if (!selectors->is_array()) {
    fr.problem(std::string(where) + " is not a list");
    return;
  }
  auto l = init(static_cast<unsigned>(selectors->size()));
  unsigned i = 0;
  for (const Json& s : *selectors) {
    JsonPtr expr = FieldReader::path(s, {"cel", "expression"});
    l.set(i++,
          text(expr.has_value() && expr->is_string() ? expr->get<std::string>() : std::string()));
  }
}

// A map of counter name -> {value: quantity} (consumesCounters, sharedCounters).
template <typename InitFn>
void fillCounters(FieldReader& fr, const Json& counters, InitFn init) {
  const auto members = counters.items();
  auto l = init(static_cast<unsigned>(members.size()));
  unsigned i = 0;
  for (const auto& [key, counter] : members) {
    l[i].setKey(text(key));
    JsonPtr v = FieldReader::member(counter, "value");
    l[i].setValue(v.has_value() ? fr.quantityText(*v, "counter " + std::string(key)) : "0");
    ++i;
  }
}

// v1 and v1beta2 nest a request's fields under `exactly`; v1beta1 and
// v1alpha3 keep them on the request itself.
bool nestsExactly(const Json& obj) {
  JsonPtr apiVersion = FieldReader::member(obj, "apiVersion");
  if (!apiVersion.has_value() || !apiVersion->is_string()) return true;
  const std::string v = apiVersion->get<std::string>();
  return v != "resource.k8s.io/v1beta1" && v != "resource.k8s.io/v1alpha3";
}

void projectRequest(FieldReader& fr, const Json& req, bool nested,
                    schema::DeviceRequest::Builder b) {
  b.setName(fr.string(req, "name", "requests"));
  JsonPtr exactly = FieldReader::member(req, "exactly");
  JsonPtr firstAvailable = FieldReader::member(req, "firstAvailable");
  if (firstAvailable.has_value() && firstAvailable->is_array() && !firstAvailable->empty()) {
    b.setFirstAvailable(true);
  } else if (nested && !(exactly.has_value() && exactly->is_object())) {
    b.setExactlyUnset(true);
  }
  // v1beta1 keeps the fields on the request itself.
  const Json& src = exactly.has_value() ? *exactly : req;
  b.setDeviceClassName(fr.string(src, "deviceClassName", "requests"));
  b.setAllocationMode(fr.string(src, "allocationMode", "requests"));
  b.setCount(fr.integer(src, "count", "requests", 0));
  b.setAdminAccess(fr.boolean(src, "adminAccess", "requests", false));
  fillCel(fr, FieldReader::member(src, "selectors"), "requests.selectors",
          [&](unsigned n) { return b.initSelectors(n); });
  if (JsonPtr reqs = FieldReader::path(src, {"capacity", "requests"})) {
    if (reqs->is_object()) {
      const auto members = reqs->items();
      auto l = b.initCapacityRequests(static_cast<unsigned>(members.size()));
      unsigned i = 0;
      for (const auto& [key, value] : members) {
        l[i].setName(text(key));
        l[i].setValue(fr.quantityText(value, "requests.capacity.requests"));
        ++i;
      }
    }
  }
}

void projectRequests(FieldReader& fr, const Json& obj, JsonPtr devices, auto init) {
  if (!devices) return;
  JsonPtr reqs = fr.array(*devices, "requests", "devices");
  if (!reqs) return;
  const bool nested = nestsExactly(obj);
  auto l = init(static_cast<unsigned>(reqs->size()));
  unsigned i = 0;
  for (const Json& r : *reqs) projectRequest(fr, r, nested, l[i++]);
}

void projectDevice(FieldReader& fr, const Json& dev, schema::Device::Builder b) {
  b.setName(fr.string(dev, "name", "devices"));
  JsonPtr basic = FieldReader::member(dev, "basic");  // v1beta1
  const Json& src = basic.has_value() ? *basic : dev;
  b.setAllowMultipleAllocations(fr.boolean(src, "allowMultipleAllocations", "devices", false));
  if (JsonPtr attrs = fr.object(src, "attributes", "devices")) {
    const auto members = attrs->items();
    auto l = b.initAttributes(static_cast<unsigned>(members.size()));
    unsigned i = 0;
    for (const auto& [key, v] : members) {
      auto a = l[i++];
      a.setName(text(key));
      // DRA's int attribute is an int64: one outside it rejects the object.
      const JsonPtr intValue = FieldReader::member(v, "int");
      bool outOfRange = false;
      const std::optional<std::int64_t> integer =
          intValue ? fr.integerValue(*intValue, "attribute " + std::string(key) + ".int", 64,
                                     &outOfRange)
                   : std::nullopt;
      if (JsonPtr x = FieldReader::member(v, "bool"); x && x->is_boolean()) {
        a.getValue().setBool(x->get<bool>());
      } else if (integer) {
        a.getValue().setInt(*integer);
      } else if (outOfRange) {
        a.getValue().setNone();
      } else if (JsonPtr x = FieldReader::member(v, "string"); x && x->is_string()) {
        a.getValue().setString(x->get<std::string>());
      } else if (JsonPtr x = FieldReader::member(v, "version"); x && x->is_string()) {
        a.getValue().setVersion(x->get<std::string>());
      } else {
        fr.problem("device " + dev.value("name", std::string()) + " attribute " + std::string(key) +
                   " has no bool, int, string or version value");
        a.getValue().setNone();
      }
    }
  }
  if (JsonPtr caps = fr.object(src, "capacity", "devices")) {
    const auto members = caps->items();
    auto l = b.initCapacity(static_cast<unsigned>(members.size()));
    unsigned i = 0;
    for (const auto& [key, cap] : members) {
      auto c = l[i++];
      c.setName(text(key));
      const std::string at = "capacity " + std::string(key);
      // v1: {value, requestPolicy}; very old shapes used a bare quantity.
      if (JsonPtr v = FieldReader::member(cap, "value")) {
        c.setValue(fr.quantityText(*v, at));
      } else {
        c.setValue(fr.quantityText(cap, at));
      }
      if (JsonPtr pol = FieldReader::member(cap, "requestPolicy")) {
        c.setHasRequestPolicy(true);
        auto p = c.initRequestPolicy();
        if (JsonPtr d = FieldReader::member(*pol, "default")) p.setDefault(fr.quantityText(*d, at));
        if (JsonPtr vv = FieldReader::member(*pol, "validValues"); vv && vv->is_array()) {
          auto vl = p.initValidValues(static_cast<unsigned>(vv->size()));
          unsigned j = 0;
          for (const Json& x : *vv) vl.set(j++, text(fr.quantityText(x, at)));
        }
        if (JsonPtr r = FieldReader::member(*pol, "validRange")) {
          p.setHasValidRange(true);
          if (JsonPtr x = FieldReader::member(*r, "min")) p.setRangeMin(fr.quantityText(*x, at));
          if (JsonPtr x = FieldReader::member(*r, "max")) p.setRangeMax(fr.quantityText(*x, at));
          if (JsonPtr x = FieldReader::member(*r, "step")) p.setRangeStep(fr.quantityText(*x, at));
        }
      }
    }
  }
  if (JsonPtr cc = fr.array(src, "consumesCounters", "devices")) {
    auto l = b.initConsumesCounters(static_cast<unsigned>(cc->size()));
    unsigned i = 0;
    for (const Json& c : *cc) {
      auto cb = l[i++];
      cb.setCounterSet(fr.string(c, "counterSet", "consumesCounters"));
      JsonPtr counters = FieldReader::member(c, "counters");
      if (!counters || !counters->is_object()) continue;
      fillCounters(fr, *counters, [&](unsigned n) { return cb.initCounters(n); });
    }
  }
}

}  // namespace

void projectDeviceClass(FieldReader& fr, const Json& obj, schema::DeviceClass::Builder out) {
  JsonPtr spec = fr.object(obj, "spec", "DeviceClass");
  if (!spec) return;
  fillCel(fr, FieldReader::member(*spec, "selectors"), "spec.selectors",
          [&](unsigned n) { return out.initSelectors(n); });
  out.setExtendedResourceName(fr.string(*spec, "extendedResourceName", "spec"));
}

void projectResourceClaimTemplate(FieldReader& fr, const Json& obj,
                                  schema::ResourceClaimTemplate::Builder out) {
  projectRequests(fr, obj, FieldReader::path(obj, {"spec", "spec", "devices"}),
                  [&](unsigned n) { return out.initRequests(n); });
}

void projectResourceClaim(FieldReader& fr, const Json& obj, schema::ResourceClaim::Builder out) {
  projectRequests(fr, obj, FieldReader::path(obj, {"spec", "devices"}),
                  [&](unsigned n) { return out.initRequests(n); });
  JsonPtr status = fr.object(obj, "status", "ResourceClaim");
  if (!status) return;
  if (JsonPtr results = FieldReader::path(*status, {"allocation", "devices", "results"})) {
    out.setAllocated(true);
    if (results->is_array()) {
      auto l = out.initResults(static_cast<unsigned>(results->size()));
      unsigned i = 0;
      for (const Json& r : *results) {
        auto b = l[i++];
        b.setRequest(fr.string(r, "request", "results"));
        b.setDriver(fr.string(r, "driver", "results"));
        b.setPool(fr.string(r, "pool", "results"));
        b.setDevice(fr.string(r, "device", "results"));
        b.setAdminAccess(fr.boolean(r, "adminAccess", "results", false));
        fillQuantities(fr, FieldReader::member(r, "consumedCapacity"), "results.consumedCapacity",
                       [&](unsigned n) { return b.initConsumedCapacity(n); });
      }
    }
  } else if (FieldReader::member(*status, "allocation")) {
    out.setAllocated(true);
  }
  if (JsonPtr rf = fr.array(*status, "reservedFor", "status")) {
    auto l = out.initReservedFor(static_cast<unsigned>(rf->size()));
    unsigned i = 0;
    for (const Json& c : *rf) {
      l[i].setResource(fr.string(c, "resource", "reservedFor"));
      l[i].setName(fr.string(c, "name", "reservedFor"));
      l[i].setUid(fr.string(c, "uid", "reservedFor"));
      ++i;
    }
  }
}

void projectResourceSlice(FieldReader& fr, const Json& obj, schema::ResourceSlice::Builder out) {
  JsonPtr spec = fr.object(obj, "spec", "ResourceSlice");
  if (!spec) return;
  out.setDriver(fr.string(*spec, "driver", "spec"));
  out.setNodeName(fr.string(*spec, "nodeName", "spec"));
  if (JsonPtr pool = fr.object(*spec, "pool", "spec")) {
    out.setPool(fr.string(*pool, "name", "spec.pool"));
    out.setPoolGeneration(fr.integer(*pool, "generation", "spec.pool", 0));
    out.setResourceSliceCount(fr.integer(*pool, "resourceSliceCount", "spec.pool", 1));
  }
  if (JsonPtr devs = fr.array(*spec, "devices", "spec")) {
    auto l = out.initDevices(static_cast<unsigned>(devs->size()));
    unsigned i = 0;
    for (const Json& d : *devs) projectDevice(fr, d, l[i++]);
  }
  if (JsonPtr sets = fr.array(*spec, "sharedCounters", "spec")) {
    auto l = out.initSharedCounters(static_cast<unsigned>(sets->size()));
    unsigned i = 0;
    for (const Json& s : *sets) {
      auto b = l[i++];
      b.setName(fr.string(s, "name", "sharedCounters"));
      JsonPtr counters = FieldReader::member(s, "counters");
      if (!counters || !counters->is_object()) continue;
      fillCounters(fr, *counters, [&](unsigned n) { return b.initCounters(n); });
    }
  }
}

}  // namespace ledger::ingest
