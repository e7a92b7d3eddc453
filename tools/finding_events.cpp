#include "tools/finding_events.h"

#include <capnp/serialize.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "ledger/sha256.h"

namespace ledger::cli {

namespace {

// The longest Event name the API accepts (a DNS subdomain), less ".<16 hex>".
constexpr std::size_t kMaxNamePrefix = 253 - 17;

struct WorkloadRef {
  std::string ns;
  std::string name;
};

// Finding::object is "Kind namespace/name" (replay::objectRef) for a
// Workload; nullopt-like false for any other object.
bool workloadOf(const replay::Finding& f, WorkloadRef* out) {
  constexpr std::string_view prefix = "Workload ";
  if (f.object.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string ref = f.object.substr(prefix.size());
  const auto slash = ref.find('/');
  if (slash == std::string::npos) return false;
  out->ns = ref.substr(0, slash);
  out->name = ref.substr(slash + 1);
  return true;
}

}  // namespace

std::string findingEventName(const std::string& workloadName, const std::string& uid,
                             const std::string& type, const std::string& message, std::uint32_t n) {
  Sha256 h;
  // NUL-separated: none of the parts holds one, so no two tuples hash alike.
  const std::string count = std::to_string(n);
  for (const std::string* part : {&uid, &type, &message, &count}) {
    h.update(*part);
    h.update(std::string_view("\0", 1));
  }
  const Digest d = h.finish();
  char hex[17];
  for (int i = 0; i < 8; ++i) std::snprintf(hex + 2 * i, 3, "%02x", d[static_cast<std::size_t>(i)]);
  std::string prefix = workloadName.substr(0, kMaxNamePrefix);
  while (!prefix.empty() && (prefix.back() == '.' || prefix.back() == '-')) prefix.pop_back();
  return prefix + "." + std::string(hex, 16);
}

FindingEvents::FindingEvents(LiveState& live, kube::EventPoster& poster,
                             std::chrono::milliseconds interval)
    : live_(live), poster_(poster), interval_(interval) {
  live_.setReportListener([this](const replay::ClusterState& state,
                                 const replay::StateReport& report) { onReport(state, report); });
}

FindingEvents::~FindingEvents() {
  stop();
  live_.setReportListener({});
}

void FindingEvents::start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, interval_, [&] { return stopping_; })) {
      lock.unlock();
      live_.refresh();
      lock.lock();
    }
  });
}

void FindingEvents::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FindingEvents::onReport(const replay::ClusterState& state, const replay::StateReport& report) {
  std::set<Key> open;
  for (const replay::Finding& f : report.findings) {
    WorkloadRef ref;
    if (!workloadOf(f, &ref)) continue;
    const replay::StoredObject* wl = state.find(replay::ObjectKind::kWorkload, ref.ns, ref.name);
    if (wl == nullptr) continue;  // not a live Workload: nothing to attach an Event to
    Key key{std::string(wl->uid()), f.type, f.message};
    if (open_.count(key) != 0 || !open.insert(key).second) {
      open.insert(std::move(key));
      continue;
    }
    kube::KubeEvent e;
    try {
      // The stored record names the version the API served the Workload in.
      capnp::FlatArrayMessageReader reader(wl->recordWords());
      const auto identity = reader.getRoot<schema::ProjectedRecord>().getIdentity();
      e.apiVersion = std::string(identity.getGroup().cStr()) + "/" + identity.getVersion().cStr();
    } catch (const kj::Exception& ex) {
      spdlog::error("events: reading Workload {}/{} failed, no event for its {}: {}", ref.ns,
                    ref.name, f.type, ex.getDescription().cStr());
      continue;
    }
    std::uint32_t& n = openings_[key];
    e.name = findingEventName(ref.name, std::get<0>(key), f.type, f.message, n);
    ++n;
    e.ns = ref.ns;
    e.kind = "Workload";
    e.objectName = ref.name;
    e.uid = std::get<0>(key);
    e.type = "Warning";
    e.reason = f.type;
    e.message = f.message;
    poster_.post(std::move(e));
  }
  open_ = std::move(open);
  // A deleted Workload's findings cannot reopen (a new one has a new uid).
  std::set<std::string> uids;
  for (const auto& w : report.workloads) uids.insert(w.uid);
  std::erase_if(openings_,
                [&](const auto& entry) { return !uids.count(std::get<0>(entry.first)); });
}

}  // namespace ledger::cli
