#include "replay/kueue/charge_at_reservation.h"

#include <capnp/any.h>
#include <algorithm>

#include <set>
#include <tuple>

#include "replay/kueue/dra/device_catalog.h"
#include "replay/kueue/dra/resource_mapper.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::replay {

struct ChargeAtReservation::InputsView {
  ClusterState state;
  dra::ResourceMapper mapper;
  dra::DeviceCatalog catalog;
  dra::DeviceMatchCache matches;
  dra::DraContext dra;

  InputsView(ClusterState s, const StoredObject* config, cel::SelectorCache& selectors)
      : state(std::move(s)),
        mapper(config != nullptr
                   ? dra::ResourceMapper(config->projection().getBody().getDraConfig())
                   : dra::ResourceMapper()),
        catalog(state),
        dra{state, mapper, catalog, selectors, matches, false} {}
};

std::vector<std::string> referencedTemplates(const std::string& ns,
                                             schema::Workload::Reader workload) {
  std::vector<std::string> out;
  for (auto ps : workload.getPodSets()) {
    for (auto c : ps.getTemplate().getResourceClaims()) {
      if (c.getResourceClaimTemplateName().size() != 0) {
        out.push_back(ClusterState::key(ns, textView(c.getResourceClaimTemplateName())));
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ChargeAtReservation::ChargeAtReservation(const ClusterState& state) : state_(state) {}
ChargeAtReservation::~ChargeAtReservation() = default;

void ChargeAtReservation::indexChanges() {
  if (indexed_) return;
  indexed_ = true;
  for (ObjectKind kind :
       {ObjectKind::kDeviceClass, ObjectKind::kResourceClaimTemplate, ObjectKind::kResourceSlice}) {
    for (const auto& [key, obj] : state_.objects(kind)) {
      changeSeqs_.push_back(obj->seq());
      if (kind == ObjectKind::kResourceClaimTemplate) {
        auto& last = lastTemplateChange_[key];
        last = std::max(last, obj->seq());
      }
    }
  }
  for (const auto& [entryKey, obj] : state_.objects(ObjectKind::kRetiredInput)) {
    RetiredVersion v;
    if (!RetiredVersion::parse(entryKey, &v) || v.configVersion) continue;
    changeSeqs_.push_back(obj->seq());
    changeSeqs_.push_back(v.untilSeq);
    if (v.kind == ObjectKind::kResourceClaimTemplate) {
      auto [it, inserted] = lastTemplateChange_.try_emplace(std::string(v.key), v.untilSeq);
      if (!inserted) it->second = std::max(it->second, v.untilSeq);
    }
  }
  for (const auto& e : state_.chargeHistory().epochs()) changeSeqs_.push_back(e.fromSeq);
  std::sort(changeSeqs_.begin(), changeSeqs_.end());
  changeSeqs_.erase(std::unique(changeSeqs_.begin(), changeSeqs_.end()), changeSeqs_.end());
}

bool ChargeAtReservation::templateChangedAfter(const std::string& key, std::uint64_t seq) const {
  auto it = lastTemplateChange_.find(key);
  return it != lastTemplateChange_.end() && it->second > seq;
}

bool ChargeAtReservation::changedAfter(std::uint64_t reservedSeq, const std::string& ns,
                                       schema::Workload::Reader workload, bool readDevices) {
  const ChargeHistory& h = state_.chargeHistory();
  const auto& epochs = h.epochs();
  if (!epochs.empty() && epochs.back().fromSeq > reservedSeq) return true;
  if (h.lastInputChange(ChargeInput::kDeviceClass) > reservedSeq) return true;
  if (readDevices && h.lastInputChange(ChargeInput::kResourceSlice) > reservedSeq &&
      slicesChangedAfter(reservedSeq))
    return true;
  if (h.lastInputChange(ChargeInput::kResourceClaimTemplate) > reservedSeq) {
    indexChanges();
    for (const auto& key : referencedTemplates(ns, workload)) {
      if (templateChangedAfter(key, reservedSeq)) return true;
    }
  }
  return false;
}

bool ChargeAtReservation::sameForCharges(const StoredObject& then, const StoredObject& now) {
  auto it = sameAsLive_.find(&then);
  if (it != sameAsLive_.end()) return it->second;
  // The slice as a charge reads it: everything but its generation, which a
  // driver bumps on every republication (the pools' completeness is
  // compared apart, in slicesChangedAfter).
  auto a = then.projection().getBody().getResourceSlice();
  auto b = now.projection().getBody().getResourceSlice();
  const bool same =
      a.getDriver() == b.getDriver() && a.getPool() == b.getPool() &&
      a.getNodeName() == b.getNodeName() &&
      a.getResourceSliceCount() == b.getResourceSliceCount() &&
      capnp::AnyList::Reader(a.getDevices()).equals(capnp::AnyList::Reader(b.getDevices())) ==
          capnp::Equality::EQUAL &&
      capnp::AnyList::Reader(a.getSharedCounters())
              .equals(capnp::AnyList::Reader(b.getSharedCounters())) == capnp::Equality::EQUAL;
  return sameAsLive_.emplace(&then, same).first->second;
}

bool ChargeAtReservation::slicesChangedAfter(std::uint64_t seq) {
  indexChanges();
  // Reservations between the same two changes saw the same slices.
  auto last = std::upper_bound(changeSeqs_.begin(), changeSeqs_.end(), seq);
  const std::uint64_t epoch = last == changeSeqs_.begin() ? 0 : *std::prev(last);
  if (auto it = slicesChanged_.find(epoch); it != slicesChanged_.end()) return it->second;
  const ObjectMap& live = state_.objects(ObjectKind::kResourceSlice);
  // Which slices a catalog holds, and per pool which form its newest
  // generation and whether it is complete (device_catalog.h): the same
  // then and now, with every slice's content the same, means the same
  // charges. Generation numbers themselves are read by no charge.
  struct PoolState {
    std::int64_t generation = INT64_MIN;
    std::int64_t sliceCount = 0;
    std::vector<std::string_view> newest;
    bool operator==(const PoolState& o) const {
      return newest == o.newest && (newest.size() == static_cast<std::size_t>(sliceCount)) ==
                                       (o.newest.size() == static_cast<std::size_t>(o.sliceCount));
    }
  };
  using Pools = std::map<std::pair<std::string_view, std::string_view>, PoolState>;
  const auto addTo = [](Pools& pools, const StoredObject& s) {
    auto rs = s.projection().getBody().getResourceSlice();
    PoolState& p = pools[{textView(rs.getDriver()), textView(rs.getPool())}];
    if (rs.getPoolGeneration() > p.generation) {
      p.generation = rs.getPoolGeneration();
      p.sliceCount = rs.getResourceSliceCount();
      p.newest.clear();
    }
    if (rs.getPoolGeneration() == p.generation) p.newest.push_back(s.name());
  };
  bool changed = false;
  Pools then;
  std::size_t keysThen = 0;
  for (const auto& [key, obj] : live) {
    if (obj->seq() <= seq) {
      addTo(then, *obj);
      ++keysThen;
    }
  }
  for (const auto& [entryKey, obj] : state_.objects(ObjectKind::kRetiredInput)) {
    RetiredVersion v;
    if (!RetiredVersion::parse(entryKey, &v) || v.kind != ObjectKind::kResourceSlice ||
        v.untilSeq <= seq || obj->seq() > seq)
      continue;
    addTo(then, *obj);
    ++keysThen;
    auto now = live.find(v.key);
    if (now == live.end() || !sameForCharges(*obj, *now->second)) changed = true;
  }
  // A slice created after `seq`, or one deleted since, changes the set.
  if (keysThen != live.size()) changed = true;
  if (!changed) {
    Pools now;
    for (const auto& [key, obj] : live) addTo(now, *obj);
    for (auto& [k, p] : then) std::sort(p.newest.begin(), p.newest.end());
    for (auto& [k, p] : now) std::sort(p.newest.begin(), p.newest.end());
    changed = then != now;
  }
  return slicesChanged_.emplace(epoch, changed).first->second;
}

dra::DraContext& ChargeAtReservation::contextAt(std::uint64_t reservedSeq,
                                                cel::SelectorCache& selectors) {
  indexChanges();
  // Reservations between the same two changes saw the same inputs.
  auto last = std::upper_bound(changeSeqs_.begin(), changeSeqs_.end(), reservedSeq);
  const std::uint64_t epoch = last == changeSeqs_.begin() ? 0 : *std::prev(last);
  auto& view = views_[epoch];
  if (!view) {
    const ConfigEpoch* config = state_.chargeHistory().epochAt(reservedSeq);
    view = std::make_unique<InputsView>(
        state_.chargeInputsAt(reservedSeq),
        config != nullptr ? state_.configVersion(config->versionSeq) : nullptr, selectors);
  }
  view->dra.catalogRead = false;
  return view->dra;
}

std::vector<ChargeAtReservation::Change> ChargeAtReservation::changesAfter(std::uint64_t seq,
                                                                           ObjectKind kind) const {
  std::vector<Change> out;
  // A version retired after `seq` ended in a change or a deletion...
  std::set<std::pair<std::string, std::uint64_t>> replacedAt;
  for (const auto& [entryKey, obj] : state_.objects(ObjectKind::kRetiredInput)) {
    RetiredVersion v;
    if (!RetiredVersion::parse(entryKey, &v) || v.configVersion || v.kind != kind ||
        v.untilSeq <= seq)
      continue;
    out.push_back(
        Change{v.untilSeq, v.untilNs, kind, std::string(v.key), v.deleted ? "deleted" : "changed"});
    if (!v.deleted) replacedAt.emplace(std::string(v.key), v.untilSeq);
  }
  // ... and a live version written after it, not by such a change, was created.
  for (const auto& [key, obj] : state_.objects(kind)) {
    if (obj->seq() > seq && replacedAt.count({key, obj->seq()}) == 0)
      out.push_back(Change{obj->seq(), obj->timeNs(), kind, key, "created"});
  }
  std::sort(out.begin(), out.end(), [](const Change& a, const Change& b) { return a.seq < b.seq; });
  return out;
}

namespace {

std::string at(std::uint64_t seq, std::int64_t timeNs) {
  return formatRfc3339(timeNs) + " (seq " + std::to_string(seq) + ")";
}

// "ConfigMap kueue-system/kueue-manager-config" from a DraConfig key
// (group/kind/namespace/name).
std::string configSourceName(std::string_view key) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto slash = key.find('/');
    parts.push_back(key.substr(0, slash));
    if (slash == std::string_view::npos) break;
    key.remove_prefix(slash + 1);
  }
  if (parts.size() < 4) return std::string(key);
  std::string out(parts[1]);
  if (!parts[2].empty())
    out.append(" ").append(parts[2]).append("/").append(parts[3]);
  else if (!parts[3].empty())
    out.append(" ").append(parts[3]);
  return out;
}

}  // namespace

std::string describeConfigSource(std::string_view key) { return configSourceName(key); }

std::string ChargeAtReservation::describeChangesAfter(std::uint64_t reservedSeq,
                                                      const std::string& ns,
                                                      schema::Workload::Reader workload,
                                                      bool readDevices) const {
  std::vector<std::string> parts;
  const ChargeHistory& h = state_.chargeHistory();
  const ConfigEpoch* then = h.epochAt(reservedSeq);
  if (!h.epochs().empty() && h.epochs().back().fromSeq > reservedSeq) {
    const ConfigEpoch& now = h.epochs().back();
    std::string p = "the DRA mapping changed: ";
    p += now.versionSeq == 0
             ? std::string("no configuration source")
             : configSourceName(now.sourceKey) + " as of " + at(now.versionSeq, now.versionNs);
    p += " in effect from " + at(now.fromSeq, now.fromNs);
    if (then == nullptr || then->versionSeq == 0) p += " (none at reservation)";
    parts.push_back(std::move(p));
  }
  const std::vector<std::string> templates = referencedTemplates(ns, workload);
  for (const Change& c : changesAfter(reservedSeq, ObjectKind::kResourceClaimTemplate)) {
    if (std::binary_search(templates.begin(), templates.end(), c.key))
      parts.push_back("ResourceClaimTemplate " + c.key + " " + c.what + " at " +
                      at(c.seq, c.timeNs));
  }
  for (const Change& c : changesAfter(reservedSeq, ObjectKind::kDeviceClass))
    parts.push_back("DeviceClass " + c.key + " " + c.what + " at " + at(c.seq, c.timeNs));
  if (readDevices && h.lastInputChange(ChargeInput::kResourceSlice) > reservedSeq) {
    const auto slices = changesAfter(reservedSeq, ObjectKind::kResourceSlice);
    if (!slices.empty()) {
      parts.push_back(std::to_string(slices.size()) + " ResourceSlice change(s), the last " +
                      slices.back().key + " " + slices.back().what + " at " +
                      at(slices.back().seq, slices.back().timeNs));
    }
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out.empty() ? std::string("the charge inputs changed") : out;
}

}  // namespace ledger::replay
