#include "tools/serve/table_columns.h"

#include <charconv>

#include "schema/k8s/rfc3339.h"
#include "tools/serve/core_printers.h"

namespace ledger::serve {

namespace {

TableColumn nameColumn() {
  return {"Name", "string", "name", "Name must be unique within a namespace. Cannot be updated.",
          0,      ""};
}

TableColumn ageColumn() {
  return {"Age", "date",
          "",    "Time from creation to the moment asked",
          0,     ".metadata.creationTimestamp"};
}

TableColumn col(const char* name, const char* type, const char* path, int priority = 0,
                const char* description = "") {
  return {name, type, "", description, priority, path};
}

TableColumn computed(const char* name, CellFunction cell, int priority, const char* description) {
  return {name, "string", "", description, priority, "", cell};
}

// printers.go's podColumnDefinitions and printPod.
std::vector<TableColumn> podColumns() {
  return {
      nameColumn(),
      computed("Ready", podReadyCell, 0,
               "The aggregate readiness state of this pod for accepting traffic."),
      computed("Status", podStatusCell, 0, "The aggregate status of the containers in this pod."),
      computed("Restarts", podRestartsCell, 0,
               "The number of times the containers in this pod have been restarted and when "
               "the last container in this pod has restarted."),
      ageColumn(),
      computed("IP", podIpCell, 1, "IP address allocated to the pod."),
      computed("Node", podNodeCell, 1, "The node the pod is bound to (spec.nodeName)."),
      computed("Nominated Node", podNominatedNodeCell, 1,
               "The node the scheduler nominated for the pod to preempt on."),
      computed("Readiness Gates", podReadinessGatesCell, 1,
               "The readiness gates whose condition is True, of all.")};
}

// printers.go's resourceClaimColumnDefinitions (Name, State, Age), then the
// ledger's devices and consumers under -o wide.
std::vector<TableColumn> claimColumns() {
  return {nameColumn(),
          computed("State", claimStateCell, 0,
                   "A summary of the current state (allocated, pending, reserved, etc.)."),
          ageColumn(),
          computed("Allocated", claimAllocatedCell, 1, "The allocated devices, POOL/DEVICE."),
          computed("Reserved For", claimReservedForCell, 1,
                   "The consumers the claim is reserved for, RESOURCE/NAME.")};
}

}  // namespace

std::vector<TableColumn> tableColumns(const ApiResource& r, std::string_view version) {
  if (r.group.empty() && r.kind == "Pod") return podColumns();
  if (r.group == "resource.k8s.io" && r.kind == "ResourceClaim") return claimColumns();
  std::vector<TableColumn> c{nameColumn()};
  if (r.group == "kueue.x-k8s.io") {
    if (r.kind == "ClusterQueue") {
      c.push_back(col("Cohort", "string",
                      version == "v1beta1" ? ".spec.cohort" : ".spec.cohortName", 0,
                      "Cohort that this ClusterQueue belongs to"));
      c.push_back(col("Strategy", "string", ".spec.queueingStrategy", 1,
                      "The queueing strategy used to prioritize workloads"));
      c.push_back(col("Pending Workloads", "integer", ".status.pendingWorkloads", 0,
                      "Number of pending workloads"));
      c.push_back(col("Admitted Workloads", "integer", ".status.admittedWorkloads", 1,
                      "Number of admitted workloads that haven't finished yet"));
      return c;
    }
    if (r.kind == "LocalQueue") {
      c.push_back(col("ClusterQueue", "string", ".spec.clusterQueue", 0, "Backing ClusterQueue"));
      c.push_back(col("Pending Workloads", "integer", ".status.pendingWorkloads", 0,
                      "Number of pending workloads"));
      c.push_back(col("Admitted Workloads", "integer", ".status.admittedWorkloads", 0,
                      "Number of admitted workloads that haven't finished yet."));
      return c;
    }
    if (r.kind == "Workload") {
      c.push_back(col("Queue", "string", ".spec.queueName", 0,
                      "Name of the queue this workload was submitted to"));
      c.push_back(col("Reserved in", "string", ".status.admission.clusterQueue", 0,
                      "Name of the ClusterQueue where the workload is reserving quota"));
      c.push_back(col("Admitted", "string", ".status.conditions[?(@.type=='Admitted')].status", 0,
                      "Admission status"));
      c.push_back(col("Finished", "string", ".status.conditions[?(@.type=='Finished')].status", 0,
                      "Workload finished"));
      c.push_back(ageColumn());
      return c;
    }
  }
  if (r.ledgerOwn) {
    if (r.kind == "QueueUsage") {
      c.push_back(col("Cohort", "string", ".spec.cohort"));
      c.push_back(col("Pending", "integer", ".status.workloads.pending"));
      c.push_back(col("Reserving", "integer", ".status.workloads.reserved"));
      c.push_back(col("Admitted", "integer", ".status.workloads.admitted"));
      c.push_back(
          col("Usage", "string", ".status.summary", 0, "reserved/nominal per flavor and resource"));
      c.push_back(col("Held", "string", ".status.heldSummary", 0,
                      "held through ResourceClaims per flavor and resource, and the uncharged "
                      "part"));
      return c;
    }
    if (r.kind == "LedgerFinding") {
      c.push_back(col("Type", "string", ".spec.type"));
      c.push_back(col("Object", "string", ".spec.object"));
      c.push_back(col("Message", "string", ".spec.message"));
      return c;
    }
    if (r.kind == "WorkloadHistory") {
      c.push_back(col("ClusterQueue", "string", ".status.clusterQueue"));
      c.push_back(col("State", "string", ".status.state"));
      c.push_back(col("Records", "integer", ".status.recordCount"));
      return c;
    }
    if (r.kind == "WorkloadWhy") {
      c.push_back(col("State", "string", ".status.state"));
      c.push_back(
          col("Waited", "string", ".status.waited", 0, "total time pending up to the moment"));
      c.push_back(col("Evictions", "integer", ".status.evictionCount"));
      c.push_back(col("Unexpected", "integer", ".status.unexpectedCount", 0,
                      "preemptions that did not follow the preempting queue's policy"));
      c.push_back(ageColumn());
      return c;
    }
  }
  c.push_back(ageColumn());
  return c;
}

namespace {

nlohmann::json recordedAtCell(const nlohmann::json& object, std::int64_t) {
  const nlohmann::json* at = &object;
  for (const char* key : {"metadata", "annotations", kRecordedAtAnnotation}) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return *at;
}

}  // namespace

std::vector<TableColumn> watchColumns(std::vector<TableColumn> columns) {
  columns.push_back(
      {"Recorded", "string", "", "When the ledger recorded this change", 0, "", recordedAtCell});
  return columns;
}

nlohmann::json columnDefinitions(const std::vector<TableColumn>& columns) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : columns) {
    out.push_back({{"name", c.name},
                   {"type", c.type},
                   {"format", c.format},
                   {"description", c.description},
                   {"priority", c.priority}});
  }
  return out;
}

nlohmann::json evalJsonPath(const nlohmann::json& object, std::string_view path) {
  const nlohmann::json* at = &object;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      std::size_t end = path.find_first_of(".[", i);
      if (end == std::string_view::npos) end = path.size();
      const std::string field(path.substr(i, end - i));
      if (!at->is_object() || !at->contains(field)) return nullptr;
      at = &(*at)[field];
      i = end;
    } else if (path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string_view::npos) return nullptr;
      const std::string_view inside = path.substr(i + 1, close - i - 1);
      i = close + 1;
      if (!at->is_array()) return nullptr;
      if (inside.starts_with("?(@.") && inside.ends_with(")")) {
        // ?(@.key=='value')
        const std::string_view cond = inside.substr(4, inside.size() - 5);
        const auto eq = cond.find("==");
        if (eq == std::string_view::npos) return nullptr;
        const std::string key(cond.substr(0, eq));
        std::string_view value = cond.substr(eq + 2);
        if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"')) {
          value = value.substr(1, value.size() - 2);
        }
        const nlohmann::json* found = nullptr;
        for (const auto& item : *at) {
          if (item.is_object() && item.contains(key) && item[key].is_string() &&
              item[key].get<std::string>() == value) {
            found = &item;
            break;
          }
        }
        if (found == nullptr) return nullptr;
        at = found;
      } else {
        std::size_t index = 0;
        auto [end, ec] = std::from_chars(inside.data(), inside.data() + inside.size(), index);
        if (ec != std::errc() || end != inside.data() + inside.size() || index >= at->size()) {
          return nullptr;
        }
        at = &(*at)[index];
      }
    } else {
      return nullptr;
    }
  }
  return *at;
}

// apimachinery/pkg/util/duration.HumanDuration.
std::string humanDuration(std::int64_t ns) {
  const std::int64_t seconds = ns / 1'000'000'000;
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return std::to_string(seconds) + "s";
  const std::int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const std::int64_t s = seconds % 60;
    return std::to_string(minutes) + "m" + (s == 0 ? "" : std::to_string(s) + "s");
  }
  if (minutes < 60 * 3) return std::to_string(minutes) + "m";
  const std::int64_t hours = minutes / 60;
  if (hours < 8) {
    const std::int64_t m = minutes % 60;
    return std::to_string(hours) + "h" + (m == 0 ? "" : std::to_string(m) + "m");
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    const std::int64_t h = hours % 24;
    return std::to_string(hours / 24) + "d" + (h == 0 ? "" : std::to_string(h) + "h");
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const std::int64_t dy = (hours / 24) % 365;
    return std::to_string(hours / 24 / 365) + "y" + (dy == 0 ? "" : std::to_string(dy) + "d");
  }
  return std::to_string(hours / 24 / 365) + "y";
}

nlohmann::json tableCells(const std::vector<TableColumn>& columns, const nlohmann::json& object,
                          std::int64_t momentNs) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : columns) {
    if (c.cell != nullptr) {
      cells.push_back(c.cell(object, momentNs));
      continue;
    }
    if (c.jsonPath.empty()) {
      cells.push_back(evalJsonPath(object, ".metadata.name"));
      continue;
    }
    nlohmann::json v = evalJsonPath(object, c.jsonPath);
    if (c.type == "date" && v.is_string()) {
      auto t = tryParseRfc3339(v.get<std::string>());
      v = t ? nlohmann::json(humanDuration(momentNs - *t)) : nlohmann::json("<unknown>");
    }
    cells.push_back(std::move(v));
  }
  return cells;
}

}  // namespace ledger::serve
