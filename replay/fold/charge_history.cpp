#include "replay/fold/charge_history.h"

#include <kj/exception.h>

#include <algorithm>
#include <stdexcept>

namespace ledger::replay {

namespace {

std::string key(std::string_view ns, std::string_view name) {
  std::string k(ns);
  k.push_back('/');
  k.append(name);
  return k;
}

void digestU64(Sha256& h, std::uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  h.update(b, sizeof b);
}

void digestText(Sha256& h, std::string_view s) {
  digestU64(h, s.size());
  h.update(s);
}

}  // namespace

bool ChargeHistory::noteWorkload(std::string_view key, std::uint64_t seq, std::int64_t timeNs,
                                 bool quotaReserved, std::int64_t reservedAtNs) {
  auto it = reservations_.find(key);
  if (quotaReserved) {
    // Still reserved: the charge stays the one fixed when it became True.
    if (it == reservations_.end()) {
      reservations_.emplace(std::string(key), Reservation{seq, timeNs, inSnapshot(),
                                                          inSnapshot() ? reservedAtNs : 0});
      reservationSeqs_.insert(seq);
    }
    return false;
  }
  if (it == reservations_.end()) return false;
  const std::uint64_t oldest = oldestReservation();
  reservationSeqs_.erase(reservationSeqs_.find(it->second.seq));
  reservations_.erase(it);
  return oldestReservation() != oldest;
}

ChargeHistory::Reservation ChargeHistory::reservedAt(std::string_view key) const {
  auto it = reservations_.find(key);
  return it == reservations_.end() ? Reservation() : it->second;
}

bool ChargeHistory::isKueueControllerPod(std::string_view name, bool controllerManagerLabel) {
  return controllerManagerLabel || name.substr(0, 25) == "kueue-controller-manager-";
}

bool ChargeHistory::controllerSeenFor(std::string_view controllerNamespace) const {
  if (controllerNamespace.empty()) return !controllerNamespaces_.empty();
  return controllerNamespaces_.count(controllerNamespace) != 0;
}

bool ChargeHistory::takeNewest(const std::string* ns, std::uint64_t seq, std::int64_t timeNs,
                               bool restart) {
  const std::pair<const std::string, Source>* newest = nullptr;
  for (const auto& entry : sources_) {
    const Source& s = entry.second;
    if (ns != nullptr && !s.controllerNamespace.empty() && s.controllerNamespace != *ns) continue;
    if (newest == nullptr || s.seq > newest->second.seq) newest = &entry;
  }
  // A controller no source is meant for (another operator's, labelled the
  // same way) reads none of these.
  if (restart && newest == nullptr) return false;
  const std::uint64_t version = newest != nullptr ? newest->second.seq : 0;
  if (epochs_.empty() ? version == 0 : epochs_.back().versionSeq == version) return false;
  ConfigEpoch e;
  e.fromSeq = seq;
  e.fromNs = timeNs;
  e.controllerRestart = restart;
  if (newest != nullptr) {
    e.versionSeq = newest->second.seq;
    e.versionNs = newest->second.timeNs;
    e.sourceKey = newest->first;
  }
  epochs_.push_back(std::move(e));
  pruneEpochs();
  return true;
}

bool ChargeHistory::noteConfigSource(const std::string& key, std::uint64_t seq, std::int64_t timeNs,
                                     std::string_view controllerNamespace, bool deleted) {
  if (deleted) {
    sources_.erase(key);
  } else {
    sources_[key] = Source{seq, timeNs, std::string(controllerNamespace)};
  }
  // A running Kueue keeps the configuration it read at start. Inside a
  // snapshot the ledger did not see that start: the LISTs came back in any
  // order, so the controller Pod listed before the configuration says
  // nothing of which it read; the snapshot's configuration is taken as the
  // one in effect (docs/reference.md "Observation").
  if (!inSnapshot() && controllerSeenFor(controllerNamespace)) return false;
  return takeNewest(nullptr, seq, timeNs, false);
}

bool ChargeHistory::noteControllerPod(std::string_view ns, std::string_view name, std::uint64_t seq,
                                      std::int64_t timeNs, bool running, bool deleted) {
  controllerNamespaces_.emplace(ns);
  const std::string podKey = key(ns, name);
  auto it = controllerPods_.find(podKey);
  const bool wasRunning = it != controllerPods_.end() && it->second;
  if (deleted) {
    if (it != controllerPods_.end()) controllerPods_.erase(it);
    return false;
  }
  controllerPods_[podKey] = running;
  if (!running || wasRunning) return false;
  // A controller starts: it reads the newest configuration meant for it.
  const std::string nsName(ns);
  return takeNewest(&nsName, seq, timeNs, true);
}

const ConfigEpoch* ChargeHistory::epochAt(std::uint64_t seq) const {
  auto it = std::upper_bound(epochs_.begin(), epochs_.end(), seq,
                             [](std::uint64_t s, const ConfigEpoch& e) { return s < e.fromSeq; });
  if (it == epochs_.begin()) return nullptr;
  return &*std::prev(it);
}

bool ChargeHistory::versionReferenced(std::uint64_t versionSeq) const {
  return versionSeq != 0 && std::any_of(epochs_.begin(), epochs_.end(), [&](const ConfigEpoch& e) {
           return e.versionSeq == versionSeq;
         });
}

void ChargeHistory::pruneEpochs() {
  // An epoch is needed while some reservation falls in it; the newest is
  // always in effect.
  const std::uint64_t oldest = oldestReservation();
  std::size_t drop = 0;
  while (drop + 1 < epochs_.size() && epochs_[drop + 1].fromSeq <= oldest) ++drop;
  epochs_.erase(epochs_.begin(), epochs_.begin() + static_cast<std::ptrdiff_t>(drop));
}

void ChargeHistory::serialize(schema::ChargeHistory::Builder out) const {
  auto rl = out.initReservations(static_cast<unsigned>(reservations_.size()));
  unsigned i = 0;
  for (const auto& [k, r] : reservations_) {
    rl[i].setWorkload(k);
    rl[i].setSeq(r.seq);
    rl[i].setSnapshot(r.snapshot);
    rl[i].setReservedAtNs(r.reservedAtNs);
    rl[i++].setTimeNs(r.timeNs);
  }
  out.setOpenSnapshotSeq(openSnapshot_);
  auto sl = out.initConfigSources(static_cast<unsigned>(sources_.size()));
  i = 0;
  for (const auto& [k, s] : sources_) {
    auto b = sl[i++];
    b.setKey(k);
    b.setSeq(s.seq);
    b.setTimeNs(s.timeNs);
    b.setControllerNamespace(s.controllerNamespace);
  }
  auto el = out.initConfigEpochs(static_cast<unsigned>(epochs_.size()));
  i = 0;
  for (const auto& e : epochs_) {
    auto b = el[i++];
    b.setFromSeq(e.fromSeq);
    b.setFromNs(e.fromNs);
    b.setVersionSeq(e.versionSeq);
    b.setVersionNs(e.versionNs);
    b.setSourceKey(e.sourceKey);
    b.setControllerRestart(e.controllerRestart);
  }
  auto pl = out.initControllerPods(static_cast<unsigned>(controllerPods_.size()));
  i = 0;
  for (const auto& [k, running] : controllerPods_) {
    pl[i].setKey(k);
    pl[i++].setRunning(running);
  }
  auto nl = out.initControllerNamespaces(static_cast<unsigned>(controllerNamespaces_.size()));
  i = 0;
  for (const auto& ns : controllerNamespaces_) nl.set(i++, ns);
  auto ll = out.initLastInputChange(kChargeInputKinds);
  for (i = 0; i < kChargeInputKinds; ++i) ll.set(i, lastInputChange_[i]);
}

void ChargeHistory::restore(schema::ChargeHistory::Reader in) {
  *this = ChargeHistory();
  for (auto r : in.getReservations()) {
    if (r.getSeq() == 0) throw std::runtime_error("checkpoint names a reservation at seq 0");
    reservations_.emplace(
        r.getWorkload().cStr(),
        Reservation{r.getSeq(), r.getTimeNs(), r.getSnapshot(), r.getReservedAtNs()});
    reservationSeqs_.insert(r.getSeq());
  }
  for (auto s : in.getConfigSources()) {
    sources_[s.getKey().cStr()] =
        Source{s.getSeq(), s.getTimeNs(), std::string(s.getControllerNamespace().cStr())};
  }
  std::uint64_t previous = 0;
  for (auto e : in.getConfigEpochs()) {
    if (e.getFromSeq() < previous) throw std::runtime_error("checkpoint epochs are out of order");
    previous = e.getFromSeq();
    epochs_.push_back(ConfigEpoch{e.getFromSeq(), e.getFromNs(), e.getVersionSeq(),
                                  e.getVersionNs(), e.getSourceKey().cStr(),
                                  e.getControllerRestart()});
  }
  for (auto p : in.getControllerPods()) controllerPods_[p.getKey().cStr()] = p.getRunning();
  for (auto ns : in.getControllerNamespaces()) controllerNamespaces_.emplace(ns.cStr());
  auto last = in.getLastInputChange();
  for (unsigned i = 0; i < kChargeInputKinds && i < last.size(); ++i) lastInputChange_[i] = last[i];
  openSnapshot_ = in.getOpenSnapshotSeq();
}

void ChargeHistory::digestInto(Sha256& h) const {
  h.update("charge-history", 14);
  digestU64(h, reservations_.size());
  for (const auto& [k, r] : reservations_) {
    digestText(h, k);
    digestU64(h, r.seq);
    digestU64(h, static_cast<std::uint64_t>(r.timeNs));
    // Only when set: the digests of ledgers without snapshots stay as they were.
    if (r.snapshot) {
      digestText(h, "snapshot");
      digestU64(h, static_cast<std::uint64_t>(r.reservedAtNs));
    }
  }
  digestU64(h, sources_.size());
  for (const auto& [k, s] : sources_) {
    digestText(h, k);
    digestU64(h, s.seq);
    digestU64(h, static_cast<std::uint64_t>(s.timeNs));
    digestText(h, s.controllerNamespace);
  }
  digestU64(h, epochs_.size());
  for (const auto& e : epochs_) {
    digestU64(h, e.fromSeq);
    digestU64(h, static_cast<std::uint64_t>(e.fromNs));
    digestU64(h, e.versionSeq);
    digestU64(h, static_cast<std::uint64_t>(e.versionNs));
    digestText(h, e.sourceKey);
    digestU64(h, e.controllerRestart ? 1 : 0);
  }
  digestU64(h, controllerPods_.size());
  for (const auto& [k, running] : controllerPods_) {
    digestText(h, k);
    digestU64(h, running ? 1 : 0);
  }
  digestU64(h, controllerNamespaces_.size());
  for (const auto& ns : controllerNamespaces_) digestText(h, ns);
  for (std::uint64_t v : lastInputChange_) digestU64(h, v);
  if (openSnapshot_ != 0) {
    digestText(h, "open-snapshot");
    digestU64(h, openSnapshot_);
  }
}

}  // namespace ledger::replay
