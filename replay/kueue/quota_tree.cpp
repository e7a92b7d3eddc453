#include "replay/kueue/quota_tree.h"

#include <set>

namespace ledger::replay {

namespace {

Quantity maxZero(const Quantity& q) { return q.isNegative() ? Quantity() : q; }

void readGroups(capnp::List<schema::ResourceGroup>::Reader groups,
                std::map<FlavorResource, ResourceLimits>& into) {
  for (auto rg : groups) {
    for (auto f : rg.getFlavors()) {
      for (auto r : f.getResources()) {
        ResourceLimits l;
        l.nominal = Quantity::tryParse(r.getNominalQuota().cStr()).value_or(Quantity());
        l.borrowingLimit = optionalQuantity(r.getBorrowingLimit());
        l.lendingLimit = optionalQuantity(r.getLendingLimit());
        into[{f.getName().cStr(), r.getName().cStr()}] = l;
      }
    }
  }
}

}  // namespace

std::optional<Quantity> optionalQuantity(const capnp::Text::Reader& text) {
  if (text.size() == 0) return std::nullopt;
  return Quantity::tryParse(text.cStr());
}

QuotaTree::QuotaTree(const ClusterState& state, const Usage& clusterQueueUsage)
    : usage_(clusterQueueUsage) {
  for (const auto& [key, obj] : state.objects(ObjectKind::kCohort)) {
    auto c = obj->projection().getBody().getCohort();
    Node& n = cohorts_[std::string(obj->name())];
    n.parent = c.getParent().cStr();
    readGroups(c.getResourceGroups(), n.limits);
  }
  for (const auto& [key, obj] : state.objects(ObjectKind::kClusterQueue)) {
    auto cq = obj->projection().getBody().getClusterQueue();
    Node& n = queues_[std::string(obj->name())];
    n.parent = cq.getCohort().cStr();
    readGroups(cq.getResourceGroups(), n.limits);
    if (!n.parent.empty()) cohorts_[n.parent];  // implicit cohort
  }
  // Parents named but not defined are empty cohorts; cut cycles.
  std::vector<std::string> names;
  for (const auto& [name, n] : cohorts_) names.push_back(name);
  for (const auto& name : names) {
    const std::string parent = cohorts_[name].parent;
    if (!parent.empty()) cohorts_[parent];
  }
  for (auto& [name, n] : cohorts_) {
    std::set<std::string> seen{name};
    std::string p = n.parent;
    while (!p.empty()) {
      if (!seen.insert(p).second) {
        n.parent.clear();  // a cycle: treat this cohort as a root
        break;
      }
      p = cohorts_[p].parent;
    }
  }
  for (const auto& [name, n] : cohorts_) {
    if (!n.parent.empty()) cohorts_[n.parent].children.emplace_back(name, true);
  }
  for (const auto& [name, n] : queues_) {
    if (!n.parent.empty()) cohorts_[n.parent].children.emplace_back(name, false);
  }
}

const QuotaTree::Node* QuotaTree::node(const std::string& name, bool isCohort) const {
  const auto& map = isCohort ? cohorts_ : queues_;
  auto it = map.find(name);
  return it == map.end() ? nullptr : &it->second;
}

bool QuotaTree::hasClusterQueue(const std::string& name) const { return queues_.count(name) != 0; }

std::string QuotaTree::parentOf(const std::string& name, bool isCohort) const {
  const Node* n = node(name, isCohort);
  return n == nullptr ? std::string() : n->parent;
}

const ResourceLimits* QuotaTree::limits(const std::string& name, bool isCohort,
                                        const FlavorResource& fr) const {
  const Node* n = node(name, isCohort);
  if (n == nullptr) return nullptr;
  auto it = n->limits.find(fr);
  return it == n->limits.end() ? nullptr : &it->second;
}

Quantity QuotaTree::subtreeQuota(const std::string& name, bool isCohort,
                                 const FlavorResource& fr) const {
  const Node* n = node(name, isCohort);
  if (isCohort) {
    if (auto kept = n->keptSubtreeQuota.find(fr); kept != n->keptSubtreeQuota.end())
      return kept->second;
  }
  const ResourceLimits* l = limits(name, isCohort, fr);
  Quantity q = l != nullptr ? l->nominal : Quantity();
  if (isCohort) {
    for (const auto& [child, childIsCohort] : n->children) {
      q += subtreeQuota(child, childIsCohort, fr) - localQuota(child, childIsCohort, fr);
    }
    n->keptSubtreeQuota.emplace(fr, q);
  }
  return q;
}

Quantity QuotaTree::localQuota(const std::string& name, bool isCohort,
                               const FlavorResource& fr) const {
  const ResourceLimits* l = limits(name, isCohort, fr);
  if (l == nullptr || !l->lendingLimit) return Quantity();
  return maxZero(subtreeQuota(name, isCohort, fr) - *l->lendingLimit);
}

Quantity QuotaTree::usage(const std::string& name, bool isCohort, const FlavorResource& fr) const {
  if (!isCohort) {
    auto it = usage_.find(name);
    if (it == usage_.end()) return Quantity();
    auto u = it->second.find(fr);
    return u == it->second.end() ? Quantity() : u->second;
  }
  const Node* n = node(name, true);
  if (auto kept = n->keptUsage.find(fr); kept != n->keptUsage.end()) return kept->second;
  Quantity total;
  for (const auto& [child, childIsCohort] : n->children) {
    total += maxZero(usage(child, childIsCohort, fr) - localQuota(child, childIsCohort, fr));
  }
  n->keptUsage.emplace(fr, total);
  return total;
}

Quantity QuotaTree::availableAt(const std::string& name, bool isCohort,
                                const FlavorResource& fr) const {
  const std::string parent = parentOf(name, isCohort);
  const Quantity subtree = subtreeQuota(name, isCohort, fr);
  const Quantity used = usage(name, isCohort, fr);
  if (parent.empty()) return subtree - used;
  const Quantity local = localQuota(name, isCohort, fr);
  Quantity p = availableAt(parent, true, fr);
  const ResourceLimits* l = limits(name, isCohort, fr);
  if (l != nullptr && l->borrowingLimit) {
    const Quantity cap = subtree - local - maxZero(used - local) + *l->borrowingLimit;
    if (cap < p) p = cap;
  }
  return maxZero(local - used) + p;
}

Quantity QuotaTree::available(const std::string& clusterQueue, const FlavorResource& fr) const {
  return maxZero(availableAt(clusterQueue, false, fr));
}

Quantity QuotaTree::potentialAt(const std::string& name, bool isCohort,
                                const FlavorResource& fr) const {
  const std::string parent = parentOf(name, isCohort);
  const Quantity subtree = subtreeQuota(name, isCohort, fr);
  if (parent.empty()) return subtree;
  Quantity p = localQuota(name, isCohort, fr) + potentialAt(parent, true, fr);
  const ResourceLimits* l = limits(name, isCohort, fr);
  if (l != nullptr && l->borrowingLimit && subtree + *l->borrowingLimit < p) {
    p = subtree + *l->borrowingLimit;
  }
  return p;
}

Quantity QuotaTree::potentialAvailable(const std::string& clusterQueue,
                                       const FlavorResource& fr) const {
  return potentialAt(clusterQueue, false, fr);
}

std::vector<std::string> QuotaTree::rootCohorts() const {
  std::vector<std::string> out;
  for (const auto& [name, n] : cohorts_) {
    if (n.parent.empty()) out.push_back(name);
  }
  return out;
}

std::vector<std::pair<std::string, bool>> QuotaTree::children(const std::string& cohort) const {
  const Node* n = node(cohort, true);
  return n == nullptr ? std::vector<std::pair<std::string, bool>>{} : n->children;
}

}  // namespace ledger::replay
