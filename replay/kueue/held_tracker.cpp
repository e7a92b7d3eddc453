#include "replay/kueue/held_tracker.h"

#include <optional>
#include <unordered_map>
#include <utility>

#include "replay/kueue/claim_measure.h"

namespace ledger::replay {

// Named, not anonymous: HeldTracker::Impl, which has external linkage, holds them.
namespace held_internal {

struct ClaimInfo {
  std::string ns;
  std::vector<std::string> refUids;      // metadata.ownerReferences
  std::vector<std::string> reservedFor;  // status.reservedFor
  ResourceList held;                     // what its allocation holds
  bool provisional = false;              // measured before a device was published
  std::optional<HeldTarget> target;      // who holds it now
  // Equal in all but `target` (which attach() sets).
  bool sameAs(const ClaimInfo& o) const {
    return ns == o.ns && refUids == o.refUids && reservedFor == o.reservedFor && held == o.held;
  }
};

struct PodInfo {
  std::string ns;
  std::vector<std::string> ownerUids;
  std::vector<std::string> claimKeys;  // status.resourceClaimStatuses
  bool terminal = false;
  friend bool operator==(const PodInfo&, const PodInfo&) = default;
};

}  // namespace held_internal

namespace {

using held_internal::ClaimInfo;
using held_internal::PodInfo;

// Whether `have` lists the uids of `list`, in its order, without copying them.
template <typename List, typename UidOf>
bool sameUids(const std::vector<std::string>& have, List list, UidOf uidOf) {
  if (have.size() != list.size()) return false;
  std::size_t i = 0;
  for (auto entry : list) {
    if (have[i++] != textView(uidOf(entry))) return false;
  }
  return true;
}

bool sameOwners(const std::vector<std::string>& have, schema::Projection::Reader p) {
  return sameUids(have, p.getOwnerReferences(), [](auto o) { return o.getUid(); });
}

bool sameEntries(capnp::List<schema::KeyValue>::Reader a, capnp::List<schema::KeyValue>::Reader b) {
  if (a.size() != b.size()) return false;
  for (unsigned i = 0; i < a.size(); ++i) {
    if (textView(a[i].getKey()) != textView(b[i].getKey()) ||
        textView(a[i].getValue()) != textView(b[i].getValue()))
      return false;
  }
  return true;
}

// Whether two versions of one claim (same uid) hold the same: a claim's
// spec, its requests, cannot change (the API server refuses any update of a
// ResourceClaim's spec), so its allocation's results say what it holds.
bool sameAllocation(schema::ResourceClaim::Reader a, schema::ResourceClaim::Reader b) {
  if (a.getAllocated() != b.getAllocated()) return false;
  auto ra = a.getResults();
  auto rb = b.getResults();
  if (ra.size() != rb.size()) return false;
  for (unsigned i = 0; i < ra.size(); ++i) {
    auto x = ra[i];
    auto y = rb[i];
    if (x.getAdminAccess() != y.getAdminAccess() ||
        textView(x.getRequest()) != textView(y.getRequest()) ||
        textView(x.getDriver()) != textView(y.getDriver()) ||
        textView(x.getPool()) != textView(y.getPool()) ||
        textView(x.getDevice()) != textView(y.getDevice()) ||
        !sameEntries(x.getConsumedCapacity(), y.getConsumedCapacity()))
      return false;
  }
  return true;
}

// Whether `keys` are the claim keys (ClusterState::key) of `pod`'s
// status.resourceClaimStatuses that name a claim, in order.
bool sameClaimKeys(const std::vector<std::string>& keys, std::string_view ns,
                   schema::Pod::Reader pod) {
  std::size_t i = 0;
  for (auto status : pod.getResourceClaimStatuses()) {
    const std::string_view name = textView(status.getResourceClaimName());
    if (name.empty()) continue;
    if (i == keys.size()) return false;
    const std::string_view key = keys[i++];
    const bool same = ns.empty()
                          ? key == name
                          : key.size() == ns.size() + 1 + name.size() && key.starts_with(ns) &&
                                key[ns.size()] == '/' && key.ends_with(name);
    if (!same) return false;
  }
  return i == keys.size();
}

std::vector<std::string> ownerUids(schema::Projection::Reader p) {
  std::vector<std::string> out;
  for (auto o : p.getOwnerReferences()) out.emplace_back(o.getUid().cStr());
  return out;
}

void addList(ResourceList& into, const ResourceList& more, int sign) {
  for (const auto& [name, q] : more) {
    Quantity& v = into[name];
    v = sign > 0 ? v + q : v - q;
    if (v.isZero()) into.erase(name);
  }
}

}  // namespace

std::vector<std::string> workloadUids(std::string_view uid, schema::Projection::Reader p) {
  std::vector<std::string> out = ownerUids(p);
  if (!uid.empty()) out.emplace_back(uid);
  return out;
}

// Hash maps where nothing iterates them in an order that shows: ordered
// string maps were most of the cost of a record.
template <typename V>
using Hashed = std::unordered_map<std::string, V>;

struct HeldTracker::Impl {
  using ClaimInfo = held_internal::ClaimInfo;
  using PodInfo = held_internal::PodInfo;
  ClusterState state;
  ClaimMeasure measurer{state};
  Hashed<ClaimInfo> claims;  // by namespace/name
  Hashed<PodInfo> pods;      // by uid
  Hashed<std::string> podByClaim;
  Hashed<std::set<std::string>> claimsByUid;  // owner or consumer uid -> claims
  Hashed<std::set<std::string>> podsByOwner;  // owner uid -> pod uids
  Hashed<std::string> workloadByUid;
  Hashed<std::vector<std::string>> uidsOfWorkload;
  std::map<HeldTarget, ResourceList> held;
  std::set<HeldTarget> changed;

  explicit Impl(ClusterState s) : state(std::move(s)) {}

  ResourceList measure(const StoredObject& obj) {
    return measurer.measure(obj.projection().getBody().getResourceClaim());
  }

  std::optional<HeldTarget> attribute(const std::string& key, const ClaimInfo& c) const {
    const PodInfo* pod = nullptr;
    auto podOf = [&](const std::vector<std::string>& uids) {
      for (const auto& uid : uids) {
        if (auto it = pods.find(uid); it != pods.end()) pod = &it->second;
      }
    };
    podOf(c.refUids);
    if (pod == nullptr) podOf(c.reservedFor);
    if (pod == nullptr) {
      if (auto it = podByClaim.find(key); it != podByClaim.end()) podOf({it->second});
    }
    if (pod == nullptr || pod->terminal) return std::nullopt;
    for (const auto* uids : {&c.refUids, &pod->ownerUids}) {
      for (const auto& uid : *uids) {
        if (auto it = workloadByUid.find(uid); it != workloadByUid.end())
          return HeldTarget{true, it->second};
      }
    }
    return HeldTarget{false, pod->ns};
  }

  void detach(const std::string& key) {
    auto it = claims.find(key);
    if (it == claims.end() || !it->second.target) return;
    addList(held[*it->second.target], it->second.held, -1);
    if (held[*it->second.target].empty()) held.erase(*it->second.target);
    changed.insert(*it->second.target);
    it->second.target.reset();
  }

  void attach(const std::string& key) {
    auto it = claims.find(key);
    if (it == claims.end() || it->second.held.empty()) return;
    it->second.target = attribute(key, it->second);
    if (!it->second.target) return;
    addList(held[*it->second.target], it->second.held, +1);
    changed.insert(*it->second.target);
  }

  // Detaches `keys`, runs `change`, attaches them again.
  template <typename F>
  void reattach(const std::set<std::string>& keys, F&& change) {
    for (const auto& k : keys) detach(k);
    change();
    for (const auto& k : keys) attach(k);
  }

  void claimsOfUid(const std::string& uid, std::set<std::string>& out) const {
    if (auto it = claimsByUid.find(uid); it != claimsByUid.end())
      out.insert(it->second.begin(), it->second.end());
  }

  void claimsOfPod(const std::string& podUid, std::set<std::string>& out) const {
    claimsOfUid(podUid, out);
    if (auto it = pods.find(podUid); it != pods.end())
      out.insert(it->second.claimKeys.begin(), it->second.claimKeys.end());
  }

  // `sameAllocation`: the claim's previous version held what this one does.
  void setClaim(const std::string& key, const StoredObject* obj, bool sameAllocation = false) {
    std::optional<ClaimInfo> next;
    if (obj != nullptr) {
      const auto claim = obj->projection().getBody().getResourceClaim();
      auto it = claims.find(key);
      const bool keepHeld = sameAllocation && it != claims.end() && !it->second.provisional;
      // Most claim records change nothing it holds or who holds it: told
      // apart without copying or measuring anything.
      if (keepHeld && sameOwners(it->second.refUids, obj->projection()) &&
          sameUids(it->second.reservedFor, claim.getReservedFor(),
                   [](auto r) { return r.getUid(); }))
        return;
      ClaimInfo c;
      c.ns = obj->ns();
      c.refUids = ownerUids(obj->projection());
      for (auto r : claim.getReservedFor()) c.reservedFor.emplace_back(r.getUid().cStr());
      if (keepHeld) {
        c.held = it->second.held;
      } else {
        c.held = measure(*obj);
        c.provisional = measurer.lastMeasureProvisional();
      }
      if (it != claims.end() && it->second.sameAs(c)) {
        it->second.provisional = c.provisional;
        return;
      }
      next = std::move(c);
    }
    reattach({key}, [&] {
      if (auto it = claims.find(key); it != claims.end()) {
        for (const auto* uids : {&it->second.refUids, &it->second.reservedFor}) {
          for (const auto& uid : *uids) claimsByUid[uid].erase(key);
        }
        claims.erase(it);
      }
      if (!next) return;
      for (const auto* uids : {&next->refUids, &next->reservedFor}) {
        for (const auto& uid : *uids) claimsByUid[uid].insert(key);
      }
      claims.emplace(key, std::move(*next));
    });
  }

  void setPod(const std::string& uid, const StoredObject* obj) {
    if (obj == nullptr) return setPod(uid, std::string_view(), nullptr);
    const auto projection = obj->projection();
    setPod(uid, obj->ns(), &projection);
  }
  void setPod(const std::string& uid, const schema::ProjectedRecord::Reader* r) {
    if (r == nullptr) return setPod(uid, std::string_view(), nullptr);
    const auto projection = r->getObject();
    setPod(uid, textView(r->getIdentity().getNamespace()), &projection);
  }
  // `projection` null: the pod is gone.
  void setPod(const std::string& uid, std::string_view ns,
              const schema::Projection::Reader* projection) {
    std::optional<PodInfo> next;
    if (projection != nullptr) {
      auto pod = projection->getBody().getPod();
      const std::string_view phase = textView(pod.getPhase());
      const bool terminal = phase == "Succeeded" || phase == "Failed";
      // Most Pod records change nothing attribution reads: told apart
      // without copying anything.
      if (auto it = pods.find(uid); it != pods.end() && it->second.terminal == terminal &&
                                    it->second.ns == ns &&
                                    sameOwners(it->second.ownerUids, *projection) &&
                                    sameClaimKeys(it->second.claimKeys, ns, pod))
        return;
      PodInfo p;
      p.ns = ns;
      p.ownerUids = ownerUids(*projection);
      for (auto s : pod.getResourceClaimStatuses()) {
        if (s.getResourceClaimName().size() > 0)
          p.claimKeys.push_back(ClusterState::key(ns, s.getResourceClaimName().cStr()));
      }
      p.terminal = terminal;
      if (auto it = pods.find(uid); it != pods.end() && it->second == p) return;
      next = std::move(p);
    }
    std::set<std::string> affected;
    claimsOfPod(uid, affected);
    if (next) affected.insert(next->claimKeys.begin(), next->claimKeys.end());
    reattach(affected, [&] {
      if (auto it = pods.find(uid); it != pods.end()) {
        for (const auto& owner : it->second.ownerUids) podsByOwner[owner].erase(uid);
        for (const auto& k : it->second.claimKeys) podByClaim.erase(k);
        pods.erase(it);
      }
      if (!next) return;
      for (const auto& owner : next->ownerUids) podsByOwner[owner].insert(uid);
      for (const auto& k : next->claimKeys) podByClaim[k] = uid;
      pods.emplace(uid, std::move(*next));
    });
  }

  void remeasureAll() {
    std::set<std::string> keys;
    for (const auto& [key, c] : claims) keys.insert(key);
    reattach(keys, [&] {
      for (auto& [key, c] : claims) {
        const StoredObject* obj = state.find(ObjectKind::kResourceClaim, key);
        c.held = obj != nullptr ? measure(*obj) : ResourceList{};
        c.provisional = obj != nullptr && measurer.lastMeasureProvisional();
      }
    });
  }
};

HeldTracker::HeldTracker(ClusterState state) : impl_(std::make_unique<Impl>(std::move(state))) {
  Impl& m = *impl_;
  for (const auto& [key, wl] : m.state.objects(ObjectKind::kWorkload))
    setWorkload(key, workloadUids(wl->uid(), wl->projection()));
  for (const auto& [key, pod] : m.state.objects(ObjectKind::kPod))
    m.setPod(std::string(pod->uid()), pod.get());
  for (const auto& [key, claim] : m.state.objects(ObjectKind::kResourceClaim))
    m.setClaim(key, claim.get());
  m.changed.clear();
}

HeldTracker::~HeldTracker() = default;

void HeldTracker::applyRecord(std::uint64_t seq, kj::ArrayPtr<const capnp::word> words,
                              schema::ProjectedRecord::Reader r) {
  Impl& m = *impl_;
  auto body = r.getObject().getBody();
  if (body.isWorkload() || body.isClusterQueue()) return;
  // The state keeps what measuring reads - claims, slices, classes, the
  // configuration and the controller Pods whose restarts make it take
  // effect (charge_history.h) - not every Pod: most records are Pods'.
  const bool deleted = r.getType() == schema::EventType::DELETED;
  auto id = r.getIdentity();
  const std::string key = ClusterState::key(textView(id.getNamespace()), textView(id.getName()));
  bool sameAllocationAsBefore = false;
  if (body.isResourceClaim() && !deleted) {
    const StoredObject* before = m.state.find(ObjectKind::kResourceClaim, key);
    sameAllocationAsBefore =
        before != nullptr && before->uid() == textView(id.getUid()) &&
        sameAllocation(before->projection().getBody().getResourceClaim(), body.getResourceClaim());
  }
  if (!body.isPod() || body.getPod().getControllerManagerLabel()) m.state.apply(seq, words);
  if (body.isResourceClaim()) {
    m.setClaim(key, deleted ? nullptr : m.state.find(ObjectKind::kResourceClaim, key),
               sameAllocationAsBefore);
  } else if (body.isPod()) {
    m.setPod(id.getUid().cStr(), deleted ? nullptr : &r);
  }
  // A claim is measured when it is allocated, with the slices published
  // then: a device's counters do not change under an allocation, and
  // measuring every claim again at every slice update was most of the cost.
  if (body.isResourceSlice()) m.measurer.slicesChanged();
  // A new mapping (in effect when its epoch says, which a controller Pod's
  // restart may decide) or DeviceClass measures every claim again.
  if (m.measurer.inputsChanged(body.isDeviceClass()) && !m.claims.empty()) m.remeasureAll();
}

void HeldTracker::setWorkload(const std::string& key, std::vector<std::string> uids) {
  Impl& m = *impl_;
  std::set<std::string> affected;
  auto collect = [&](const std::vector<std::string>& list) {
    for (const auto& uid : list) {
      m.claimsOfUid(uid, affected);
      if (auto it = m.podsByOwner.find(uid); it != m.podsByOwner.end()) {
        for (const auto& pod : it->second) m.claimsOfPod(pod, affected);
      }
    }
  };
  auto old = m.uidsOfWorkload.find(key);
  // Most Workload records change its status, not who it is.
  if (old != m.uidsOfWorkload.end() && old->second == uids) return;
  if (old != m.uidsOfWorkload.end()) collect(old->second);
  collect(uids);
  m.reattach(affected, [&] {
    if (old != m.uidsOfWorkload.end()) {
      for (const auto& uid : old->second) {
        if (auto it = m.workloadByUid.find(uid); it != m.workloadByUid.end() && it->second == key)
          m.workloadByUid.erase(it);
      }
      m.uidsOfWorkload.erase(old);
    }
    if (uids.empty()) return;
    for (const auto& uid : uids) m.workloadByUid[uid] = key;
    m.uidsOfWorkload.emplace(key, std::move(uids));
  });
}

const ResourceList& HeldTracker::heldBy(const HeldTarget& target) const {
  static const ResourceList kNone;
  auto it = impl_->held.find(target);
  return it == impl_->held.end() ? kNone : it->second;
}

std::set<HeldTarget> HeldTracker::takeChanged() { return std::exchange(impl_->changed, {}); }

std::vector<HeldTarget> HeldTracker::holders() const {
  std::vector<HeldTarget> out;
  for (const auto& [target, list] : impl_->held) out.push_back(target);
  return out;
}

}  // namespace ledger::replay
