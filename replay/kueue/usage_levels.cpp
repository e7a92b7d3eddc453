#include "replay/kueue/usage_levels.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "replay/fold/scan_ahead.h"
#include "replay/kueue/held_record.h"
#include "replay/kueue/held_tracker.h"
#include "replay/kueue/workload_usage.h"
#include "schema/rollup.capnp.h"

namespace ledger::replay {

namespace {

// What one workload holds and where it is charged.
struct Contribution {
  std::string clusterQueue;
  std::string owner;
  bool admitted = false;
  std::map<FlavorResource, Quantity> usage;
};

// How a Workload's held devices are keyed and what it is charged for them
// (docs/reference.md, "Held against charged"): the ClusterQueue of its
// admission ("-" without one), the flavor its admission charges the resource
// in when exactly one does ("-" otherwise), and its reserved usage per
// resource while it holds a reservation (nothing otherwise).
struct HeldView {
  std::string clusterQueue = "-";
  std::string owner;
  std::map<std::string, std::string> flavorOf;
  std::map<std::string, Quantity> charged;
};

// Equal quantities, written the same way: sums and differences keep their
// operands' formats, and answers print them.
bool sameAmounts(const Quantity& a, const Quantity& b) {
  return a == b && a.format() == b.format();
}

template <typename Map>
bool sameAmountMaps(const Map& a, const Map& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.first == y.first && sameAmounts(x.second, y.second);
  });
}

bool sameContribution(const Contribution& a, const Contribution& b) {
  return a.clusterQueue == b.clusterQueue && a.owner == b.owner && a.admitted == b.admitted &&
         sameAmountMaps(a.usage, b.usage);
}

bool sameView(const HeldView& a, const HeldView& b) {
  return a.clusterQueue == b.clusterQueue && a.owner == b.owner && a.flavorOf == b.flavorOf &&
         sameAmountMaps(a.charged, b.charged);
}

// One key's part of a target's holding: held and uncharged.
struct HeldPart {
  ReservedKey key;
  Quantity held;
  Quantity uncharged;
  // Equal also in how the amounts are written: sums keep their operands'
  // formats, and answers print them.
  friend bool operator==(const HeldPart& a, const HeldPart& b) {
    return a.key == b.key && sameAmounts(a.held, b.held) && sameAmounts(a.uncharged, b.uncharged);
  }
};

std::map<FlavorResource, Quantity> nominalOf(schema::ClusterQueue::Reader cq) {
  std::map<FlavorResource, Quantity> out;
  for (auto rg : cq.getResourceGroups()) {
    for (auto f : rg.getFlavors()) {
      for (auto r : f.getResources()) {
        out[{f.getName().cStr(), r.getName().cStr()}] +=
            Quantity::tryParse(r.getNominalQuota().cStr()).value_or(Quantity());
      }
    }
  }
  return out;
}

class Integrator {
 public:
  Integrator(const UsageScope& scope, UsageSteps* steps, std::int64_t startNs)
      : scope_(scope), steps_(steps), start_(startNs) {}

  // Takes the fold at the start, after `fromSeq`; keeps it for the held
  // devices unless `stored` gives them.
  void seed(ClusterState state, std::uint64_t fromSeq, std::unique_ptr<StoredHeldLevels> stored,
            HeldRecorder* recorder) {
    for (const auto& [key, obj] : state.objects(ObjectKind::kClusterQueue)) {
      setQueue(std::string(obj->name()), nominalOf(obj->projection().getBody().getClusterQueue()),
               start_);
    }
    for (const auto& [key, obj] : state.objects(ObjectKind::kWorkload)) {
      auto wl = obj->projection().getBody().getWorkload();
      auto [contribution, view] = chargeOf(obj->ns(), obj->name(), wl);
      setWorkload(key, std::move(contribution), start_);
      views_[key] = std::move(view);
    }
    recorder_ = recorder;
    if (stored) {
      stored_ = stored.get();
      held_ = std::move(stored);
    } else {
      auto live = std::make_unique<HeldTracker>(std::move(state));
      live_ = live.get();
      held_ = std::move(live);
    }
    for (const auto& target : held_->holders()) refreshHeld(target, start_);
    held_->takeChanged();
    if (recorder_ != nullptr) recorder_->snapshot(fromSeq, *held_);
  }

  void applyRecord(std::uint64_t seq, kj::ArrayPtr<const capnp::word> words,
                   schema::ProjectedRecord::Reader r, std::int64_t t) {
    auto body = r.getObject().getBody();
    auto id = r.getIdentity();
    const bool deleted = r.getType() == schema::EventType::DELETED;
    if (body.isWorkload()) {
      const std::string ns = id.getNamespace().cStr();
      const std::string name = id.getName().cStr();
      const std::string key = ClusterState::key(ns, name);
      // Most Workload records (status updates) keep how its devices are
      // keyed and charged: what it holds is then refreshed only when the
      // holding itself changed (below, as for any holder).
      bool sameHeldView = false;
      if (deleted) {
        setWorkload(key, std::nullopt, t);
        views_.erase(key);
      } else {
        auto [contribution, view] = chargeOf(ns, name, body.getWorkload());
        setWorkload(key, std::move(contribution), t);
        auto [it, fresh] = views_.try_emplace(key, std::move(view));
        if (!fresh) {
          sameHeldView = sameView(it->second, view);
          if (!sameHeldView) it->second = std::move(view);
        }
      }
      if (live_ != nullptr) {
        live_->setWorkload(key, deleted ? std::vector<std::string>()
                                        : workloadUids(textView(id.getUid()), r.getObject()));
      } else {
        stored_->advanceTo(seq);
      }
      // Its charge may have changed even where its holding did not.
      if (!sameHeldView) refreshHeld(HeldTarget{true, key}, t);
    } else if (body.isClusterQueue()) {
      const std::string cq = id.getName().cStr();
      if (deleted) {
        quotaText_.erase(cq);
        setQueue(cq, std::nullopt, t);
      } else if (quotasChanged(cq, body.getClusterQueue())) {
        setQueue(cq, nominalOf(body.getClusterQueue()), t);
      }
    } else if (live_ != nullptr) {
      live_->applyRecord(seq, words, r);
    } else {
      // Pods and ResourceClaims, most records: what they changed is stored.
      stored_->advanceTo(seq);
    }
    const std::set<HeldTarget> changed = held_->takeChanged();
    if (recorder_ != nullptr) {
      recorder_->changes(seq, changed, *held_);
      if (recorder_->wantsSnapshot(seq)) recorder_->snapshot(seq, *held_);
    }
    for (const auto& target : changed) refreshHeld(target, t);
  }

  // The keys the current bucket names so far: right after seed() or cut(),
  // those named from its start.
  UsageBucket namedKeys() const {
    UsageBucket out;
    for (const auto& [key, totals] : bucket_.reserved) out.reserved[key];
    for (const auto& [key, integral] : bucket_.quota) out.quota[key];
    return out;
  }

  UsageBucket cut(std::int64_t endNs) {
    for (auto& [key, level] : reserved_) {
      ReservedIntegrals& totals = bucket_.reserved[key];
      totals.reserved.add(level.reserved, endNs - level.since);
      totals.admitted.add(level.admitted, endNs - level.since);
      level.since = endNs;
    }
    for (auto& [key, level] : heldLevels_) {
      ReservedIntegrals& totals = bucket_.reserved[key];
      totals.held.add(level.held, endNs - level.since);
      totals.uncharged.add(level.uncharged, endNs - level.since);
      level.since = endNs;
    }
    for (auto& [key, level] : quota_) {
      bucket_.quota[key].add(level.value, endNs - level.since);
      level.since = endNs;
    }
    UsageBucket out = std::move(bucket_);
    out.startNs = start_;
    out.endNs = endNs;
    bucket_ = UsageBucket();
    start_ = endNs;
    // What the next bucket names from its start (usage_levels.h): every key
    // a workload holds, and every nominal quota of a live ClusterQueue.
    for (const auto& [key, level] : reserved_) bucket_.reserved[key];
    for (const auto& [key, level] : heldLevels_) bucket_.reserved[key];
    for (const auto& [key, level] : quota_) bucket_.quota[key];
    return out;
  }

 private:
  struct ReservedLevel {
    Quantity reserved;
    Quantity admitted;
    std::uint32_t holders = 0;
    std::int64_t since = 0;
  };
  struct QuotaLevel {
    Quantity value;
    std::int64_t since = 0;
  };
  struct HeldLevel {
    Quantity held;
    Quantity uncharged;
    std::int32_t holders = 0;
    std::int64_t since = 0;
  };

  // A Workload's reservation and how its held devices are keyed, from one
  // pass over its admission (admissionUsage is most of the cost of a
  // Workload record).
  std::pair<std::optional<Contribution>, HeldView> chargeOf(std::string_view ns,
                                                            std::string_view name,
                                                            schema::Workload::Reader wl) const {
    std::pair<std::optional<Contribution>, HeldView> out;
    HeldView& v = out.second;
    v.owner = scope_.owner == Owner::kNamespace ? std::string(ns) : ClusterState::key(ns, name);
    if (!wl.getHasAdmission()) return out;
    v.clusterQueue = wl.getAdmissionClusterQueue().cStr();
    auto usage = admissionUsage(wl, nullptr);
    std::map<std::string, int> flavors;
    for (const auto& [fr, q] : usage) {
      v.flavorOf[fr.second] = fr.first;
      ++flavors[fr.second];
    }
    for (const auto& [resource, n] : flavors) {
      if (n > 1) v.flavorOf[resource] = "-";
    }
    const WorkloadConditions conditions = conditionsOf(wl);
    if (!conditions.reserving()) return out;
    for (const auto& [fr, q] : usage) v.charged[fr.second] += q;
    if (scope_.clusterQueue && *scope_.clusterQueue != v.clusterQueue) return out;
    out.first = Contribution{v.clusterQueue, v.owner, conditions.admitted, std::move(usage)};
    return out;
  }

  // What `target` holds, keyed and set against its charge, replaces what
  // it held before, from `t`.
  void refreshHeld(const HeldTarget& target, std::int64_t t) {
    std::vector<HeldPart> parts = heldPartsOf(target);
    auto it = heldParts_.find(target);
    if (it != heldParts_.end()) {
      // Most Workload records change neither holding nor charge: the
      // levels, and so every integral, stay as they are.
      if (it->second == parts) return;
      for (const auto& part : it->second) adjustHeld(part, -1, t);
      heldParts_.erase(it);
    }
    if (parts.empty()) return;
    for (const auto& part : parts) adjustHeld(part, +1, t);
    heldParts_.emplace(target, std::move(parts));
  }

  // What `target` holds now, per key, held and uncharged.
  std::vector<HeldPart> heldPartsOf(const HeldTarget& target) const {
    const ResourceList& holding = held_->heldBy(target);
    if (holding.empty()) return {};
    static const HeldView kNoWorkload;
    const HeldView* view = &kNoWorkload;
    if (target.workload) {
      auto v = views_.find(target.key);
      if (v == views_.end()) return {};  // deleted: its pods are attributed anew
      view = &v->second;
    }
    if (scope_.clusterQueue && *scope_.clusterQueue != view->clusterQueue) return {};
    std::string owner = view->owner;
    if (!target.workload) owner = scope_.owner == Owner::kNamespace ? target.key : "-";
    std::vector<HeldPart> parts;
    for (const auto& [resource, amount] : holding) {
      HeldPart part{{view->clusterQueue, owner, "-", resource}, amount, amount};
      if (auto f = view->flavorOf.find(resource); f != view->flavorOf.end())
        part.key.flavor = f->second;
      if (auto c = view->charged.find(resource); c != view->charged.end()) {
        part.uncharged = c->second < amount ? amount - c->second : Quantity();
      }
      parts.push_back(std::move(part));
    }
    return parts;
  }

  void adjustHeld(const HeldPart& part, int sign, std::int64_t t) {
    auto it = heldLevels_.try_emplace(part.key, HeldLevel{{}, {}, 0, t}).first;
    HeldLevel& level = it->second;
    ReservedIntegrals& totals = bucket_.reserved[part.key];
    totals.held.add(level.held, t - level.since);
    totals.uncharged.add(level.uncharged, t - level.since);
    level.since = t;
    level.held = sign > 0 ? level.held + part.held : level.held - part.held;
    level.uncharged =
        sign > 0 ? level.uncharged + part.uncharged : level.uncharged - part.uncharged;
    level.holders += sign;
    if (level.holders == 0) heldLevels_.erase(it);
    if (steps_ != nullptr) {
      Quantity& chart = chartHeld_[{part.key.clusterQueue, part.key.resource}];
      chart = sign > 0 ? chart + part.held : chart - part.held;
      auto& points = steps_->held[{part.key.clusterQueue, part.key.resource}];
      if (!points.empty() && points.back().timeNs == t) {
        points.back().value = chart;
      } else {
        points.push_back(StepPoint{t, chart});
      }
    }
  }

  void setWorkload(const std::string& key, std::optional<Contribution> c, std::int64_t t) {
    if (auto it = workloads_.find(key); it != workloads_.end()) {
      // A status update that keeps the reservation changes no level (an
      // integral split at t sums to the unsplit one). A chart keeps the
      // point the removal and re-addition leave at t.
      if (c && steps_ == nullptr && sameContribution(it->second, *c)) return;
      charge(it->second, t, -1);
      workloads_.erase(it);
    }
    if (c) {
      charge(*c, t, +1);
      workloads_.emplace(key, std::move(*c));
    }
  }

  void charge(const Contribution& c, std::int64_t t, int sign) {
    for (const auto& [fr, q] : c.usage) {
      ReservedKey key{c.clusterQueue, c.owner, fr.first, fr.second};
      auto it = reserved_.try_emplace(key, ReservedLevel{{}, {}, 0, t}).first;
      ReservedLevel& level = it->second;
      ReservedIntegrals& totals = bucket_.reserved[key];
      totals.reserved.add(level.reserved, t - level.since);
      totals.admitted.add(level.admitted, t - level.since);
      level.since = t;
      if (sign > 0) {
        level.reserved = level.reserved + q;
        if (c.admitted) level.admitted = level.admitted + q;
        ++level.holders;
      } else {
        level.reserved = level.reserved - q;
        if (c.admitted) level.admitted = level.admitted - q;
        --level.holders;
      }
      // No holder left: the level is zero (each removal undid its addition).
      if (level.holders == 0) reserved_.erase(it);
      if (steps_ != nullptr) chartReserved(c.clusterQueue, fr.second, q, sign, t);
    }
  }

  // Whether `spec`'s quotas are written otherwise than in the last record
  // of `cq` this saw: most ClusterQueue records are status updates, and
  // comparing the text costs less than parsing every quantity again.
  bool quotasChanged(const std::string& cq, schema::ClusterQueue::Reader spec) {
    std::string text;
    for (auto rg : spec.getResourceGroups()) {
      for (auto f : rg.getFlavors()) {
        for (auto r : f.getResources()) {
          for (auto part : {f.getName(), r.getName(), r.getNominalQuota()}) {
            text.append(part.cStr(), part.size());
            text.push_back('\0');
          }
        }
      }
    }
    auto [it, fresh] = quotaText_.try_emplace(cq, text);
    if (fresh) return true;
    if (it->second == text) return false;
    it->second = std::move(text);
    return true;
  }

  void setQueue(const std::string& cq, std::optional<std::map<FlavorResource, Quantity>> nominal,
                std::int64_t t) {
    if (scope_.clusterQueue && *scope_.clusterQueue != cq) return;
    // Most ClusterQueue records are status updates with the same quotas:
    // an integral split at t sums to the unsplit one, so they change
    // nothing.
    auto [last, fresh] = lastNominal_.try_emplace(cq, nominal);
    if (!fresh) {
      const bool same = last->second.has_value() == nominal.has_value() &&
                        (!nominal || sameAmountMaps(*last->second, *nominal));
      if (same) return;
      last->second = nominal;
    }
    // Kueue's cache replaces a ClusterQueue's quotas whole; a key it no
    // longer names falls to zero (and one this bucket named stays named).
    std::set<FlavorResource> keys;
    if (nominal) {
      for (const auto& [fr, q] : *nominal) keys.insert(fr);
    }
    for (auto it = bucket_.quota.lower_bound(QuotaKey{cq, "", ""});
         it != bucket_.quota.end() && it->first.clusterQueue == cq; ++it) {
      keys.insert({it->first.flavor, it->first.resource});
    }
    for (const auto& fr : keys) {
      QuotaKey key{cq, fr.first, fr.second};
      auto it = quota_.try_emplace(key, QuotaLevel{{}, t}).first;
      bucket_.quota[key].add(it->second.value, t - it->second.since);
      it->second.since = t;
      const Quantity* value = nullptr;
      if (nominal) {
        if (auto named = nominal->find(fr); named != nominal->end()) value = &named->second;
      }
      if (value != nullptr) {
        it->second.value = *value;
      } else {
        quota_.erase(it);
      }
    }
    if (steps_ != nullptr) chartNominal(cq, nominal, t);
  }

  // The chart's reserved level per (ClusterQueue, resource): one point per
  // instant, the last change at an instant wins.
  void chartReserved(const std::string& cq, const std::string& resource, const Quantity& q,
                     int sign, std::int64_t t) {
    Quantity& level = chartReserved_[{cq, resource}];
    level = sign > 0 ? level + q : level - q;
    auto& points = steps_->reserved[{cq, resource}];
    if (!points.empty() && points.back().timeNs == t) {
      points.back().value = level;
    } else {
      points.push_back(StepPoint{t, level});
    }
  }

  // The chart's nominal level per (ClusterQueue, resource), summed over
  // flavors: a point when it changes (or first appears).
  void chartNominal(const std::string& cq,
                    const std::optional<std::map<FlavorResource, Quantity>>& nominal,
                    std::int64_t t) {
    std::map<std::string, Quantity> byResource;
    if (nominal) {
      for (const auto& [fr, q] : *nominal) byResource[fr.second] += q;
    }
    for (auto it = chartNominal_.lower_bound({cq, ""});
         it != chartNominal_.end() && it->first.first == cq; ++it) {
      byResource.try_emplace(it->first.second);
    }
    for (const auto& [resource, v] : byResource) {
      auto [it, fresh] = chartNominal_.try_emplace({cq, resource}, v);
      if (!fresh && it->second == v) continue;
      it->second = v;
      steps_->nominal[{cq, resource}].push_back(StepPoint{t, v});
    }
  }

  const UsageScope& scope_;
  UsageSteps* steps_;
  std::int64_t start_;
  UsageBucket bucket_;
  // Looked up by key for every Workload record and every change of a
  // holding, never walked in order: hashed, since workload keys share long
  // prefixes that ordered lookups compare again and again.
  std::unordered_map<std::string, Contribution> workloads_;
  std::map<ReservedKey, ReservedLevel> reserved_;
  std::map<QuotaKey, QuotaLevel> quota_;
  // Each ClusterQueue's quotas as its last record wrote them
  // (quotasChanged), and as they parsed.
  std::map<std::string, std::string> quotaText_;
  std::map<std::string, std::optional<std::map<FlavorResource, Quantity>>> lastNominal_;
  std::map<std::pair<std::string, std::string>, Quantity> chartReserved_;
  std::map<std::pair<std::string, std::string>, Quantity> chartNominal_;
  std::map<std::pair<std::string, std::string>, Quantity> chartHeld_;
  std::unique_ptr<HeldSource> held_;
  HeldTracker* live_ = nullptr;         // held_, when followed from the records
  StoredHeldLevels* stored_ = nullptr;  // held_, when read back
  HeldRecorder* recorder_ = nullptr;
  std::unordered_map<std::string, HeldView> views_;  // by workload key
  std::unordered_map<HeldTarget, std::vector<HeldPart>, HeldTargetHash> heldParts_;
  std::map<ReservedKey, HeldLevel> heldLevels_;
};

}  // namespace

void UsageBucket::append(const UsageBucket& next) {
  for (const auto& [key, totals] : next.reserved) {
    ReservedIntegrals& mine = reserved[key];
    mine.reserved += totals.reserved;
    mine.admitted += totals.admitted;
    mine.held += totals.held;
    mine.uncharged += totals.uncharged;
  }
  for (const auto& [key, integral] : next.quota) quota[key] += integral;
  endNs = next.endNs;
}

bool UsageBucket::subtract(const UsageBucket& part) {
  for (const auto& [key, totals] : part.reserved) {
    if (!reserved.contains(key)) return false;
  }
  for (const auto& [key, integral] : part.quota) {
    if (!quota.contains(key)) return false;
  }
  for (const auto& [key, totals] : part.reserved) {
    ReservedIntegrals& mine = reserved[key];
    mine.reserved -= totals.reserved;
    mine.admitted -= totals.admitted;
    mine.held -= totals.held;
    mine.uncharged -= totals.uncharged;
  }
  for (const auto& [key, integral] : part.quota) quota[key] -= integral;
  return true;
}

std::string UsageBucket::toRollup() const {
  // One segment for the whole bucket: a reader follows a pointer into a
  // second segment through a lock (capnp's ReaderArena), and a series reads
  // every entry of thousands of buckets. An entry takes about 40 words (its
  // four names and integrals); a short guess only adds a segment.
  const auto firstSegmentWords = 16 + 48 * reserved.size() + 24 * quota.size();
  capnp::MallocMessageBuilder message(static_cast<unsigned>(firstSegmentWords));
  auto root = message.initRoot<schema::UsageBucket>();
  root.setStartNs(startNs);
  root.setEndNs(endNs);
  root.setVersion(kUsageRollupVersion);
  auto reservedList = root.initReserved(static_cast<unsigned>(reserved.size()));
  unsigned i = 0;
  for (const auto& [key, totals] : reserved) {
    auto e = reservedList[i++];
    e.setClusterQueue(key.clusterQueue);
    e.setNamespace(key.owner);
    e.setFlavor(key.flavor);
    e.setResource(key.resource);
    totals.reserved.toRollup(e.initReserved());
    totals.admitted.toRollup(e.initAdmitted());
    totals.held.toRollup(e.initHeld());
    totals.uncharged.toRollup(e.initUncharged());
  }
  auto quotaList = root.initQuota(static_cast<unsigned>(quota.size()));
  i = 0;
  for (const auto& [key, integral] : quota) {
    auto e = quotaList[i++];
    e.setClusterQueue(key.clusterQueue);
    e.setFlavor(key.flavor);
    e.setResource(key.resource);
    integral.toRollup(e.initNominal());
  }
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

UsageBucket UsageBucket::fromRollup(kj::ArrayPtr<const capnp::word> words) {
  UsageBucket out;
  try {
    capnp::FlatArrayMessageReader reader(words);
    auto root = reader.getRoot<schema::UsageBucket>();
    if (root.getVersion() != kUsageRollupVersion) {
      throw ReplayError("a usage rollup of version " + std::to_string(root.getVersion()) +
                            " (this build writes " + std::to_string(kUsageRollupVersion) +
                            ": held and uncharged beside reserved); the next `ledger-replay "
                            "checkpoint` or ingest writes them again",
                        true);
    }
    out.startNs = root.getStartNs();
    out.endNs = root.getEndNs();
    // Stored in key order (toRollup walks the maps): each entry goes at the
    // end, not through a search of the keys before it.
    for (auto e : root.getReserved()) {
      out.reserved.emplace_hint(out.reserved.end(),
                                ReservedKey{e.getClusterQueue().cStr(), e.getNamespace().cStr(),
                                            e.getFlavor().cStr(), e.getResource().cStr()},
                                ReservedIntegrals{Integral::fromRollup(e.getReserved()),
                                                  Integral::fromRollup(e.getAdmitted()),
                                                  Integral::fromRollup(e.getHeld()),
                                                  Integral::fromRollup(e.getUncharged())});
    }
    for (auto e : root.getQuota()) {
      out.quota.emplace_hint(
          out.quota.end(),
          QuotaKey{e.getClusterQueue().cStr(), e.getFlavor().cStr(), e.getResource().cStr()},
          Integral::fromRollup(e.getNominal()));
    }
  } catch (const kj::Exception& e) {
    throw ReplayError(std::string("a usage rollup does not decode: ") + e.getDescription().cStr(),
                      true);
  }
  return out;
}

void integrateUsage(const Ledger& ledger, const std::vector<std::int64_t>& boundaries,
                    const UsageScope& scope, const FoldOptions& options,
                    const std::function<void(UsageBucket&&)>& onBucket, UsageSteps* steps,
                    NamedAtEnds* named, HeldLevelsUse held) {
  if (boundaries.size() < 2) throw ReplayError("integrateUsage: give at least two boundaries");
  if (!std::is_sorted(boundaries.begin(), boundaries.end())) {
    throw ReplayError("integrateUsage: boundaries must ascend");
  }
  const std::int64_t fromNs = boundaries.front();
  Replayer replayer(ledger);
  const std::uint64_t fromSeq = replayer.seqAt(fromNs);
  const std::uint64_t toSeq = replayer.seqAt(boundaries.back());
  Integrator integrator(scope, steps, fromNs);
  std::unique_ptr<StoredHeldLevels> stored;
  if (held.readStored && held.record == nullptr && options.useCheckpoints)
    stored = StoredHeldLevels::open(ledger, fromSeq, toSeq);
  integrator.seed(replayer.foldTo(fromSeq, options), fromSeq, std::move(stored), held.record);
  if (named != nullptr) named->atStart = integrator.namedKeys();
  std::size_t next = 1;
  if (toSeq > fromSeq) {
    // As long as a replay of the period, so it reports progress too (after
    // the fold to the start, which reported its own).
    const std::uint64_t total = toSeq - fromSeq;
    std::uint64_t done = 0;
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = 1ULL << 30;
    auto visit = [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> words) {
      if (options.progress && (++done & 0xFFFF) == 0) options.progress(done, total);
      capnp::FlatArrayMessageReader reader(words, limits);
      auto r = reader.getRoot<schema::ProjectedRecord>();
      const std::int64_t t = std::max(r.getTimeNs(), fromNs);
      // Times never go back (ledger/format.h), and a record at a boundary
      // belongs to the bucket ending there.
      while (t > boundaries[next]) onBucket(integrator.cut(boundaries[next++]));
      integrator.applyRecord(seq, words, r, t);
      return true;
    };
    // Reading the records and charging them cost about the same: a long
    // period reads on the other core, as a long replay does.
    Status st = scanProjectionAheadIfLong(ledger, fromSeq + 1, toSeq, visit);
    if (!st.isOk()) throw ReplayError(st);
    if (options.progress) options.progress(total, total);
  }
  while (next < boundaries.size()) onBucket(integrator.cut(boundaries[next++]));
  if (named != nullptr) named->atEnd = integrator.namedKeys();
}

}  // namespace ledger::replay
