#include "tools/serve/core_printers.h"

#include <string>

#include "schema/k8s/rfc3339.h"
#include "tools/serve/table_columns.h"

namespace ledger::serve {

namespace {

using nlohmann::json;

const json& emptyJson() {
  static const json empty;
  return empty;
}

// A member as Go reads a struct field: absent or null is the zero value.
const json& at(const json& j, const char* key) {
  if (!j.is_object()) return emptyJson();
  const auto it = j.find(key);
  return it == j.end() ? emptyJson() : *it;
}

std::string text(const json& j, const char* key) {
  const json& v = at(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::int64_t number(const json& j, const char* key) {
  const json& v = at(j, key);
  return v.is_number_integer() ? v.get<std::int64_t>() : 0;
}

bool truthy(const json& j, const char* key) {
  const json& v = at(j, key);
  return v.is_boolean() && v.get<bool>();
}

const json& items(const json& j, const char* key) {
  static const json none = json::array();
  const json& v = at(j, key);
  return v.is_array() ? v : none;
}

bool deleting(const json& object) {
  return at(at(object, "metadata"), "deletionTimestamp").is_string();
}

// podutil.IsRestartableInitContainer: an init container with restartPolicy
// Always (a sidecar).
bool restartableInit(const json& pod, const std::string& name) {
  for (const auto& c : items(at(pod, "spec"), "initContainers")) {
    if (text(c, "name") == name) return text(c, "restartPolicy") == "Always";
  }
  return false;
}

// A terminated state's reason as the printer writes it: its reason, else
// Signal:N, else ExitCode:N.
std::string terminatedReason(const json& terminated, const std::string& prefix) {
  if (!text(terminated, "reason").empty()) return prefix + text(terminated, "reason");
  if (number(terminated, "signal") != 0) {
    return prefix + "Signal:" + std::to_string(number(terminated, "signal"));
  }
  return prefix + "ExitCode:" + std::to_string(number(terminated, "exitCode"));
}

bool conditionTrue(const json& status, const char* type) {
  for (const auto& c : items(status, "conditions")) {
    if (text(c, "type") == type) return text(c, "status") == "True";
  }
  return false;
}

struct PodSummary {
  int ready = 0, total = 0, restarts = 0;
  std::int64_t lastRestartNs = 0;  // 0: none
  std::string reason;
};

void noteRestart(const json& container, std::int64_t& lastNs) {
  const std::string finished = text(at(at(container, "lastState"), "terminated"), "finishedAt");
  if (auto t = tryParseRfc3339(finished); t && *t > lastNs) lastNs = *t;
}

// The init containers' part of printPod: true while initialising.
bool initContainers(const json& pod, PodSummary& s, int& sidecarRestarts,
                    std::int64_t& sidecarLastNs) {
  const json& statuses = items(at(pod, "status"), "initContainerStatuses");
  const std::size_t count = items(at(pod, "spec"), "initContainers").size();
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    const json& c = statuses[i];
    const json& state = at(c, "state");
    const bool sidecar = restartableInit(pod, text(c, "name"));
    s.restarts += static_cast<int>(number(c, "restartCount"));
    noteRestart(c, s.lastRestartNs);
    if (sidecar) {
      sidecarRestarts += static_cast<int>(number(c, "restartCount"));
      noteRestart(c, sidecarLastNs);
    }
    const json& terminated = at(state, "terminated");
    const json& waiting = at(state, "waiting");
    if (terminated.is_object() && number(terminated, "exitCode") == 0) continue;
    if (sidecar && truthy(c, "started")) {
      if (truthy(c, "ready")) ++s.ready;
      continue;
    }
    if (terminated.is_object()) {
      s.reason = terminatedReason(terminated, "Init:");
    } else if (waiting.is_object() && !text(waiting, "reason").empty() &&
               text(waiting, "reason") != "PodInitializing") {
      s.reason = "Init:" + text(waiting, "reason");
    } else {
      s.reason = "Init:" + std::to_string(i) + "/" + std::to_string(count);
    }
    return true;
  }
  return false;
}

// printPod's summary of the pod (kubernetes pkg/printers/internalversion).
PodSummary summarise(const json& pod) {
  PodSummary s;
  const json& spec = at(pod, "spec");
  const json& status = at(pod, "status");
  s.total = static_cast<int>(items(spec, "containers").size());
  for (const auto& c : items(spec, "initContainers")) {
    if (text(c, "restartPolicy") == "Always") ++s.total;
  }
  const std::string phase = text(status, "phase");
  s.reason = text(status, "reason").empty() ? phase : text(status, "reason");
  for (const auto& c : items(status, "conditions")) {
    if (text(c, "type") == "PodScheduled" && text(c, "reason") == "SchedulingGated") {
      s.reason = "SchedulingGated";
    }
  }
  int sidecarRestarts = 0;
  std::int64_t sidecarLastNs = 0;
  const bool initialising = initContainers(pod, s, sidecarRestarts, sidecarLastNs);
  if (!initialising || conditionTrue(status, "Initialized")) {
    s.restarts = sidecarRestarts;
    s.lastRestartNs = sidecarLastNs;
    bool hasRunning = false;
    const json& statuses = items(status, "containerStatuses");
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      const json& state = at(*it, "state");
      s.restarts += static_cast<int>(number(*it, "restartCount"));
      noteRestart(*it, s.lastRestartNs);
      const json& waiting = at(state, "waiting");
      const json& terminated = at(state, "terminated");
      if (waiting.is_object() && !text(waiting, "reason").empty()) {
        s.reason = text(waiting, "reason");
      } else if (terminated.is_object()) {
        s.reason = terminatedReason(terminated, "");
      } else if (truthy(*it, "ready") && at(state, "running").is_object()) {
        hasRunning = true;
        ++s.ready;
      }
    }
    if (s.reason == "Completed" && hasRunning) {
      s.reason = conditionTrue(status, "Ready") ? "Running" : "NotReady";
    }
  }
  if (deleting(pod) && text(status, "reason") == "NodeLost") {
    s.reason = "Unknown";
  } else if (deleting(pod) && phase != "Succeeded" && phase != "Failed") {
    s.reason = "Terminating";
  }
  return s;
}

json orNone(std::string value) { return value.empty() ? json("<none>") : json(std::move(value)); }

}  // namespace

json podReadyCell(const json& pod, std::int64_t) {
  const PodSummary s = summarise(pod);
  return std::to_string(s.ready) + "/" + std::to_string(s.total);
}

json podStatusCell(const json& pod, std::int64_t) { return summarise(pod).reason; }

json podRestartsCell(const json& pod, std::int64_t momentNs) {
  const PodSummary s = summarise(pod);
  std::string out = std::to_string(s.restarts);
  if (s.restarts != 0 && s.lastRestartNs != 0) {
    out += " (" + humanDuration(momentNs - s.lastRestartNs) + " ago)";
  }
  return out;
}

json podIpCell(const json& pod, std::int64_t) {
  const json& ips = items(at(pod, "status"), "podIPs");
  return orNone(ips.empty() ? std::string() : text(ips[0], "ip"));
}

json podNodeCell(const json& pod, std::int64_t) {
  return orNone(text(at(pod, "spec"), "nodeName"));
}

json podNominatedNodeCell(const json& pod, std::int64_t) {
  return orNone(text(at(pod, "status"), "nominatedNodeName"));
}

json podReadinessGatesCell(const json& pod, std::int64_t) {
  const json& gates = items(at(pod, "spec"), "readinessGates");
  if (gates.empty()) return "<none>";
  int met = 0;
  for (const auto& g : gates) {
    for (const auto& c : items(at(pod, "status"), "conditions")) {
      if (text(c, "type") == text(g, "conditionType")) {
        if (text(c, "status") == "True") ++met;
        break;
      }
    }
  }
  return std::to_string(met) + "/" + std::to_string(gates.size());
}

json claimStateCell(const json& claim, std::int64_t) {
  std::string out;
  const bool deleted = deleting(claim);
  const json& status = at(claim, "status");
  if (deleted) out = "deleted";
  if (!at(status, "allocation").is_object()) {
    if (!deleted) out = "pending";
    return out;
  }
  out += out.empty() ? "allocated" : ",allocated";
  if (!items(status, "reservedFor").empty()) out += ",reserved";
  return out;
}

json claimAllocatedCell(const json& claim, std::int64_t) {
  std::string out;
  const json& allocation = at(at(claim, "status"), "allocation");
  for (const auto& r : items(at(allocation, "devices"), "results")) {
    if (!out.empty()) out += ",";
    out += text(r, "pool") + "/" + text(r, "device");
  }
  return orNone(std::move(out));
}

json claimReservedForCell(const json& claim, std::int64_t) {
  std::string out;
  for (const auto& r : items(at(claim, "status"), "reservedFor")) {
    if (!out.empty()) out += ",";
    out += text(r, "resource") + "/" + text(r, "name");
  }
  return orNone(std::move(out));
}

}  // namespace ledger::serve
