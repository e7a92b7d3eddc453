#include "ingest/kube/metrics.h"

#include <cstdio>
#include <sstream>

#include "ingest/net/exposition.h"

namespace ledger::kube {

namespace {

const char* stateName(ResourceState s) {
  switch (s) {
    case ResourceState::kAbsent:
      return "absent";
    case ResourceState::kSyncing:
      return "syncing";
    case ResourceState::kSynced:
      return "synced";
    default:
      return "discovering";
  }
}

void header(std::ostringstream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

std::string seconds(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns < 0 ? 0 : ns) / 1e9);
  return buf;
}

}  // namespace

void Metrics::registerResource(const std::string& id) {
  std::lock_guard lock(mu_);
  states_.emplace(id, ResourceState::kUnknown);
}

void Metrics::setState(const std::string& id, ResourceState state) {
  std::lock_guard lock(mu_);
  states_[id] = state;
}

ResourceState Metrics::state(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = states_.find(id);
  return it == states_.end() ? ResourceState::kUnknown : it->second;
}

bool Metrics::ready() const { return notReady().empty(); }

std::vector<std::string> Metrics::notReady() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  if (writesBlocked_) out.push_back("ledger: " + *writesBlocked_);
  if (states_.empty()) out.push_back("no resources registered yet");
  for (const auto& [id, s] : states_) {
    if (s == ResourceState::kUnknown || s == ResourceState::kSyncing) {
      out.push_back(id + ": " + stateName(s));
    }
  }
  return out;
}

void Metrics::recordsAppended(const std::string& kind, std::uint64_t n) {
  std::lock_guard lock(mu_);
  appended_[kind] += n;
}

void Metrics::watchEvent(const std::string& id, const std::string& type) {
  std::lock_guard lock(mu_);
  ++events_[{id, type}];
}

void Metrics::eventReceived(const std::string& kind, std::int64_t timeNs) {
  std::lock_guard lock(mu_);
  lastEventNs_[kind] = timeNs;
}

void Metrics::watchRestart(const std::string& id, const std::string& reason) {
  std::lock_guard lock(mu_);
  ++restarts_[{id, reason}];
}

void Metrics::relist(const std::string& id) {
  std::lock_guard lock(mu_);
  ++relists_[id];
}

void Metrics::unobserved(const std::string& id, std::int64_t ns) {
  std::lock_guard lock(mu_);
  auto& g = gaps_[id];
  ++g.first;
  g.second += std::max<std::int64_t>(ns, 0);
}

void Metrics::watchRejected(const std::string& id) {
  std::lock_guard lock(mu_);
  ++rejected_[id];
}

void Metrics::committed(std::uint64_t headSeq) {
  std::lock_guard lock(mu_);
  ++commits_;
  headSeq_ = headSeq;
}

void Metrics::setStoredBytes(std::uint64_t bytes) {
  std::lock_guard lock(mu_);
  storedBytes_ = bytes;
}

void Metrics::setOldestUncommitted(std::optional<std::int64_t> timeNs) {
  std::lock_guard lock(mu_);
  oldestUncommittedNs_ = timeNs;
}

void Metrics::writeFailed() {
  std::lock_guard lock(mu_);
  ++writeFailures_;
}

void Metrics::setWritesBlocked(std::optional<std::string> reason) {
  std::lock_guard lock(mu_);
  writesBlocked_ = std::move(reason);
}

void Metrics::eventEmitted() {
  std::lock_guard lock(mu_);
  ++eventsEmitted_;
}

void Metrics::eventFailed() {
  std::lock_guard lock(mu_);
  ++eventsFailed_;
}

void Metrics::eventDropped() {
  std::lock_guard lock(mu_);
  ++eventsDropped_;
}

std::uint64_t Metrics::eventsEmitted() const {
  std::lock_guard lock(mu_);
  return eventsEmitted_;
}

std::uint64_t Metrics::eventsFailed() const {
  std::lock_guard lock(mu_);
  return eventsFailed_;
}

std::uint64_t Metrics::eventsDropped() const {
  std::lock_guard lock(mu_);
  return eventsDropped_;
}

std::uint64_t Metrics::appended(const std::string& kind) const {
  std::lock_guard lock(mu_);
  auto it = appended_.find(kind);
  return it == appended_.end() ? 0 : it->second;
}

std::uint64_t Metrics::restarts(const std::string& id) const {
  std::lock_guard lock(mu_);
  std::uint64_t n = 0;
  for (const auto& [key, v] : restarts_) {
    if (key.first == id) n += v;
  }
  return n;
}

std::uint64_t Metrics::relists(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = relists_.find(id);
  return it == relists_.end() ? 0 : it->second;
}

std::uint64_t Metrics::rejected(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = rejected_.find(id);
  return it == rejected_.end() ? 0 : it->second;
}

std::uint64_t Metrics::headSeq() const {
  std::lock_guard lock(mu_);
  return headSeq_;
}

std::uint64_t Metrics::writeFailures() const {
  std::lock_guard lock(mu_);
  return writeFailures_;
}

bool Metrics::writesBlocked() const {
  std::lock_guard lock(mu_);
  return writesBlocked_.has_value();
}

std::string Metrics::render(std::int64_t nowNs) const {
  std::lock_guard lock(mu_);
  std::ostringstream out;
  header(out, "ledger_records_appended_total", "counter",
         "Records committed to the ledger, by object kind.");
  for (const auto& [kind, n] : appended_) {
    out << "ledger_records_appended_total{kind=\"" << net::labelValue(kind) << "\"} " << n << '\n';
  }
  header(out, "ledger_watch_events_total", "counter",
         "Watch events and list items received from the API server.");
  for (const auto& [key, n] : events_) {
    out << "ledger_watch_events_total{resource=\"" << net::labelValue(key.first) << "\",type=\""
        << net::labelValue(key.second) << "\"} " << n << '\n';
  }
  header(out, "ledger_watch_restarts_total", "counter",
         "Watches re-established after they ended, by reason.");
  for (const auto& [key, n] : restarts_) {
    out << "ledger_watch_restarts_total{resource=\"" << net::labelValue(key.first) << "\",reason=\""
        << net::labelValue(key.second) << "\"} " << n << '\n';
  }
  header(out, "ledger_relists_total", "counter",
         "Full LISTs made because a watch could not resume (410 Gone).");
  for (const auto& [id, n] : relists_) {
    out << "ledger_relists_total{resource=\"" << net::labelValue(id) << "\"} " << n << '\n';
  }
  header(out, "ledger_unobserved_seconds_total", "counter",
         "Seconds the ledger did not observe a resource: the gaps its relists recorded.");
  for (const auto& [id, g] : gaps_) {
    out << "ledger_unobserved_seconds_total{resource=\"" << net::labelValue(id) << "\"} "
        << static_cast<double>(g.second) / 1e9 << '\n';
  }
  header(out, "ledger_observation_gaps_total", "counter",
         "Gaps in the ledger's observation of a resource (relists after the watch was lost).");
  for (const auto& [id, g] : gaps_) {
    out << "ledger_observation_gaps_total{resource=\"" << net::labelValue(id) << "\"} " << g.first
        << '\n';
  }
  header(out, "ledger_watch_rejected_total", "counter",
         "Watch events and list items skipped because they cannot be recorded.");
  for (const auto& [id, n] : rejected_) {
    out << "ledger_watch_rejected_total{resource=\"" << net::labelValue(id) << "\"} " << n << '\n';
  }
  header(out, "ledger_commits_total", "counter", "Batches committed to the ledger.");
  out << "ledger_commits_total " << commits_ << '\n';
  header(out, "ledger_write_failures_total", "counter",
         "Commits the ledger refused for a full disk, each retry counted.");
  out << "ledger_write_failures_total " << writeFailures_ << '\n';
  header(out, "ledger_writes_blocked", "gauge",
         "1 while received events wait for disk space to be committed.");
  out << "ledger_writes_blocked " << (writesBlocked_ ? 1 : 0) << '\n';
  header(out, "ledger_last_event_age_seconds", "gauge",
         "Seconds since the last event of each kind was received.");
  for (const auto& [kind, t] : lastEventNs_) {
    out << "ledger_last_event_age_seconds{kind=\"" << net::labelValue(kind) << "\"} "
        << seconds(nowNs - t) << '\n';
  }
  header(out, "ledger_ingest_lag_seconds", "gauge",
         "Age of the oldest received event not yet committed (0 when caught up).");
  out << "ledger_ingest_lag_seconds "
      << seconds(oldestUncommittedNs_ ? nowNs - *oldestUncommittedNs_ : 0) << '\n';
  header(out, "ledger_stored_bytes", "gauge", "Size of the ledger directory on disk.");
  out << "ledger_stored_bytes " << storedBytes_ << '\n';
  header(out, "ledger_head_seq", "gauge", "The ledger's last sequence number.");
  out << "ledger_head_seq " << headSeq_ << '\n';
  header(out, "ledger_watch_synced", "gauge", "1 once the resource's watch has synced.");
  for (const auto& [id, s] : states_) {
    out << "ledger_watch_synced{resource=\"" << net::labelValue(id) << "\"} "
        << (s == ResourceState::kSynced ? 1 : 0) << '\n';
  }
  header(out, "ledger_resource_absent", "gauge",
         "1 while the resource's API is not served (retried later).");
  for (const auto& [id, s] : states_) {
    out << "ledger_resource_absent{resource=\"" << net::labelValue(id) << "\"} "
        << (s == ResourceState::kAbsent ? 1 : 0) << '\n';
  }
  header(out, "ledger_events_emitted_total", "counter",
         "Kubernetes Events posted on Workloads for opened findings (--emit-events), including "
         "those the API server already had (409 AlreadyExists).");
  out << "ledger_events_emitted_total " << eventsEmitted_ << '\n';
  header(out, "ledger_events_failed_total", "counter",
         "Kubernetes Events given up on: refused by the API server (4xx other than 409) or still "
         "failing after the retries.");
  out << "ledger_events_failed_total " << eventsFailed_ << '\n';
  header(out, "ledger_events_dropped_total", "counter",
         "Kubernetes Events dropped unsent because the poster's queue was full.");
  out << "ledger_events_dropped_total " << eventsDropped_ << '\n';
  return out.str();
}

}  // namespace ledger::kube
