#include "replay/kueue/resources.h"

namespace ledger::replay {

void addInto(ResourceList& into, const ResourceList& more) {
  for (const auto& [name, q] : more) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else {
      it->second += q;
    }
  }
}

void maxInto(ResourceList& into, const ResourceList& other) {
  for (const auto& [name, q] : other) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else if (q > it->second) {
      it->second = q;
    }
  }
}

ResourceList scaled(const ResourceList& list, std::int64_t factor) {
  ResourceList out;
  for (const auto& [name, q] : list) out.emplace(name, q * factor);
  return out;
}

ResourceList toResourceList(capnp::List<schema::KeyValue>::Reader list,
                            std::vector<std::string>* problems, const std::string& where) {
  ResourceList out;
  for (auto kv : list) {
    auto q = Quantity::tryParse(kv.getValue().cStr());
    if (!q) {
      if (problems != nullptr) {
        problems->push_back(where + " " + kv.getKey().cStr() + ": quantity '" +
                            kv.getValue().cStr() + "' is malformed");
      }
      continue;
    }
    out.insert_or_assign(kv.getKey().cStr(), *q);
  }
  return out;
}

ResourceList containerRequests(schema::Container::Reader c, std::vector<std::string>* problems) {
  const std::string where = std::string("container ") + c.getName().cStr();
  ResourceList reqs = toResourceList(c.getRequests(), problems, where + " requests");
  for (auto& [name, q] : toResourceList(c.getLimits(), problems, where + " limits")) {
    reqs.emplace(name, q);  // only where no request is given
  }
  return reqs;
}

ResourceList podRequests(schema::PodSpec::Reader spec, std::vector<std::string>* problems) {
  ResourceList reqs;
  for (auto c : spec.getContainers()) addInto(reqs, containerRequests(c, problems));
  // Restartable init containers keep running: they add to the pod's total and
  // to every init container that starts after them (KEP-753).
  ResourceList sidecars;
  ResourceList initMax;
  for (auto c : spec.getInitContainers()) {
    ResourceList r = containerRequests(c, problems);
    ResourceList use;
    if (c.getRestartPolicy() == "Always") {
      addInto(reqs, r);
      addInto(sidecars, r);
      use = sidecars;
    } else {
      use = r;
      addInto(use, sidecars);
    }
    maxInto(initMax, use);
  }
  maxInto(reqs, initMax);
  addInto(reqs, toResourceList(spec.getOverhead(), problems, "pod overhead"));
  return reqs;
}

Int128 kueueValue(const std::string& resource, const Quantity& q) {
  const Int128 unit = resource == "cpu" ? 1000000 : 1000000000;
  const Int128 n = q.nanos();
  Int128 v = n / unit;
  if (n % unit != 0) v += n > 0 ? 1 : -1;
  return v;
}

bool isExtendedResourceName(std::string_view name) {
  return name.find('/') != std::string_view::npos && name.rfind("kubernetes.io/", 0) != 0 &&
         name.rfind("hugepages-", 0) != 0;
}

}  // namespace ledger::replay
