// Projections of resource.k8s.io DRA objects. v1 and v1beta2 nest a request's
// fields under `exactly`; v1beta1 puts them on the request itself and wraps a
// device's fields in `basic`. Both shapes are accepted.
#include "project_kinds.h"

namespace ledger::ingest {

namespace {

template <typename InitFn>
void fillCel(FieldReader& fr, const Json* selectors, const char* where, InitFn init) {
  if (selectors == nullptr) return;
  if (!selectors->is_array()) {
    fr.problem(std::string(where) + " is not a list");
    return;
  }
  auto l = init(static_cast<unsigned>(selectors->size()));
  unsigned i = 0;
  for (const Json& s : *selectors) {
    const Json* expr = FieldReader::path(s, {"cel", "expression"});
    l.set(i++,
          text(expr != nullptr && expr->is_string() ? expr->get<std::string>() : std::string()));
  }
}

void projectRequest(FieldReader& fr, const Json& req, schema::DeviceRequest::Builder b) {
  b.setName(fr.string(req, "name", "requests"));
  const Json* exactly = FieldReader::member(req, "exactly");
  const Json* firstAvailable = FieldReader::member(req, "firstAvailable");
  if (firstAvailable != nullptr && firstAvailable->is_array() && !firstAvailable->empty()) {
    b.setFirstAvailable(true);
  }
  // v1beta1 keeps the fields on the request itself.
  const Json& src = exactly != nullptr ? *exactly : req;
  b.setDeviceClassName(fr.string(src, "deviceClassName", "requests"));
  b.setAllocationMode(fr.string(src, "allocationMode", "requests"));
  b.setCount(fr.integer(src, "count", "requests", 0));
  b.setAdminAccess(fr.boolean(src, "adminAccess", "requests", false));
  fillCel(fr, FieldReader::member(src, "selectors"), "requests.selectors",
          [&](unsigned n) { return b.initSelectors(n); });
  if (const Json* reqs = FieldReader::path(src, {"capacity", "requests"})) {
    if (reqs->is_object()) {
      auto l = b.initCapacityRequests(static_cast<unsigned>(reqs->size()));
      unsigned i = 0;
      for (auto it = reqs->begin(); it != reqs->end(); ++it, ++i) {
        l[i].setName(it.key());
        l[i].setValue(fr.quantityText(*it, "requests.capacity.requests"));
      }
    }
  }
}

void projectRequests(FieldReader& fr, const Json* devices, auto init) {
  if (devices == nullptr) return;
  const Json* reqs = fr.array(*devices, "requests", "devices");
  if (reqs == nullptr) return;
  auto l = init(static_cast<unsigned>(reqs->size()));
  unsigned i = 0;
  for (const Json& r : *reqs) projectRequest(fr, r, l[i++]);
}

void projectDevice(FieldReader& fr, const Json& dev, schema::Device::Builder b) {
  b.setName(fr.string(dev, "name", "devices"));
  const Json* basic = FieldReader::member(dev, "basic");  // v1beta1
  const Json& src = basic != nullptr ? *basic : dev;
  b.setAllowMultipleAllocations(fr.boolean(src, "allowMultipleAllocations", "devices", false));
  if (const Json* attrs = fr.object(src, "attributes", "devices")) {
    auto l = b.initAttributes(static_cast<unsigned>(attrs->size()));
    unsigned i = 0;
    for (auto it = attrs->begin(); it != attrs->end(); ++it, ++i) {
      auto a = l[i];
      a.setName(it.key());
      const Json& v = *it;
      if (const Json* x = FieldReader::member(v, "bool"); x && x->is_boolean()) {
        a.getValue().setBool(x->get<bool>());
      } else if (const Json* x = FieldReader::member(v, "int"); x && x->is_number_integer()) {
        a.getValue().setInt(x->get<std::int64_t>());
      } else if (const Json* x = FieldReader::member(v, "string"); x && x->is_string()) {
        a.getValue().setString(x->get<std::string>());
      } else if (const Json* x = FieldReader::member(v, "version"); x && x->is_string()) {
        a.getValue().setVersion(x->get<std::string>());
      } else {
        fr.problem("device " + dev.value("name", std::string()) + " attribute " + it.key() +
                   " has no bool, int, string or version value");
        a.getValue().setString("");
      }
    }
  }
  if (const Json* caps = fr.object(src, "capacity", "devices")) {
    auto l = b.initCapacity(static_cast<unsigned>(caps->size()));
    unsigned i = 0;
    for (auto it = caps->begin(); it != caps->end(); ++it, ++i) {
      auto c = l[i];
      c.setName(it.key());
      const std::string at = "capacity " + it.key();
      // v1: {value, requestPolicy}; very old shapes used a bare quantity.
      if (const Json* v = FieldReader::member(*it, "value")) {
        c.setValue(fr.quantityText(*v, at));
      } else {
        c.setValue(fr.quantityText(*it, at));
      }
      if (const Json* pol = FieldReader::member(*it, "requestPolicy")) {
        c.setHasRequestPolicy(true);
        auto p = c.initRequestPolicy();
        if (const Json* d = FieldReader::member(*pol, "default"))
          p.setDefault(fr.quantityText(*d, at));
        if (const Json* vv = FieldReader::member(*pol, "validValues"); vv && vv->is_array()) {
          auto vl = p.initValidValues(static_cast<unsigned>(vv->size()));
          unsigned j = 0;
          for (const Json& x : *vv) vl.set(j++, text(fr.quantityText(x, at)));
        }
        if (const Json* r = FieldReader::member(*pol, "validRange")) {
          p.setHasValidRange(true);
          if (const Json* x = FieldReader::member(*r, "min"))
            p.setRangeMin(fr.quantityText(*x, at));
          if (const Json* x = FieldReader::member(*r, "max"))
            p.setRangeMax(fr.quantityText(*x, at));
          if (const Json* x = FieldReader::member(*r, "step"))
            p.setRangeStep(fr.quantityText(*x, at));
        }
      }
    }
  }
  if (const Json* cc = fr.array(src, "consumesCounters", "devices")) {
    auto l = b.initConsumesCounters(static_cast<unsigned>(cc->size()));
    unsigned i = 0;
    for (const Json& c : *cc) {
      auto cb = l[i++];
      cb.setCounterSet(fr.string(c, "counterSet", "consumesCounters"));
      const Json* counters = FieldReader::member(c, "counters");
      if (counters == nullptr || !counters->is_object()) continue;
      auto kl = cb.initCounters(static_cast<unsigned>(counters->size()));
      unsigned j = 0;
      for (auto it = counters->begin(); it != counters->end(); ++it, ++j) {
        kl[j].setKey(it.key());
        const Json* v = FieldReader::member(*it, "value");
        kl[j].setValue(v != nullptr ? fr.quantityText(*v, "counter " + it.key()) : "0");
      }
    }
  }
}

}  // namespace

void projectDeviceClass(FieldReader& fr, const Json& obj, schema::DeviceClass::Builder out) {
  const Json* spec = fr.object(obj, "spec", "DeviceClass");
  if (spec == nullptr) return;
  fillCel(fr, FieldReader::member(*spec, "selectors"), "spec.selectors",
          [&](unsigned n) { return out.initSelectors(n); });
  out.setExtendedResourceName(fr.string(*spec, "extendedResourceName", "spec"));
}

void projectResourceClaimTemplate(FieldReader& fr, const Json& obj,
                                  schema::ResourceClaimTemplate::Builder out) {
  projectRequests(fr, FieldReader::path(obj, {"spec", "spec", "devices"}),
                  [&](unsigned n) { return out.initRequests(n); });
}

void projectResourceClaim(FieldReader& fr, const Json& obj, schema::ResourceClaim::Builder out) {
  projectRequests(fr, FieldReader::path(obj, {"spec", "devices"}),
                  [&](unsigned n) { return out.initRequests(n); });
  const Json* status = fr.object(obj, "status", "ResourceClaim");
  if (status == nullptr) return;
  if (const Json* results = FieldReader::path(*status, {"allocation", "devices", "results"})) {
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
  } else if (FieldReader::member(*status, "allocation") != nullptr) {
    out.setAllocated(true);
  }
  if (const Json* rf = fr.array(*status, "reservedFor", "status")) {
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
  const Json* spec = fr.object(obj, "spec", "ResourceSlice");
  if (spec == nullptr) return;
  out.setDriver(fr.string(*spec, "driver", "spec"));
  out.setNodeName(fr.string(*spec, "nodeName", "spec"));
  if (const Json* pool = fr.object(*spec, "pool", "spec")) {
    out.setPool(fr.string(*pool, "name", "spec.pool"));
    out.setPoolGeneration(fr.integer(*pool, "generation", "spec.pool", 0));
    out.setResourceSliceCount(fr.integer(*pool, "resourceSliceCount", "spec.pool", 1));
  }
  if (const Json* devs = fr.array(*spec, "devices", "spec")) {
    auto l = out.initDevices(static_cast<unsigned>(devs->size()));
    unsigned i = 0;
    for (const Json& d : *devs) projectDevice(fr, d, l[i++]);
  }
  if (const Json* sets = fr.array(*spec, "sharedCounters", "spec")) {
    auto l = out.initSharedCounters(static_cast<unsigned>(sets->size()));
    unsigned i = 0;
    for (const Json& s : *sets) {
      auto b = l[i++];
      b.setName(fr.string(s, "name", "sharedCounters"));
      const Json* counters = FieldReader::member(s, "counters");
      if (counters == nullptr || !counters->is_object()) continue;
      auto kl = b.initCounters(static_cast<unsigned>(counters->size()));
      unsigned j = 0;
      for (auto it = counters->begin(); it != counters->end(); ++it, ++j) {
        kl[j].setKey(it.key());
        const Json* v = FieldReader::member(*it, "value");
        kl[j].setValue(v != nullptr ? fr.quantityText(*v, "counter " + it.key()) : "0");
      }
    }
  }
}

}  // namespace ledger::ingest
