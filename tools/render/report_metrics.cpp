#include "tools/render/report_metrics.h"

#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "ingest/net/exposition.h"

namespace ledger::render {

namespace {

using replay::StateReport;

void header(std::ostringstream& out, const char* name, const char* help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n";
}

std::string value(const Quantity& q, bool unrepresentable) {
  return unrepresentable ? std::string("NaN") : exactDecimal(q);
}

std::string queueLabels(const std::string& cq, const replay::QuotaRow& row) {
  return "{cluster_queue=\"" + net::labelValue(cq) + "\",flavor=\"" + net::labelValue(row.flavor) +
         "\",resource=\"" + net::labelValue(row.resource) + "\"}";
}

std::string poolLabels(const replay::PoolReport& p) {
  return "driver=\"" + net::labelValue(p.driver) + "\",pool=\"" + net::labelValue(p.pool) + "\"";
}

void quotaRows(std::ostringstream& out, const StateReport& report) {
  header(out, "ledger_cluster_queue_reserved",
         "Quota reserved by the ClusterQueue's workloads, recomputed by the ledger "
         "(Kueue: kueue_cluster_queue_resource_reservation).");
  for (const auto& q : report.clusterQueues) {
    for (const auto& row : q.quotas) {
      out << "ledger_cluster_queue_reserved" << queueLabels(q.name, row) << ' '
          << value(row.reserved, row.reservedUnrepresentable) << '\n';
    }
  }
  header(out, "ledger_cluster_queue_admitted",
         "Quota used by the ClusterQueue's admitted workloads, recomputed by the ledger "
         "(Kueue: kueue_cluster_queue_resource_usage).");
  for (const auto& q : report.clusterQueues) {
    for (const auto& row : q.quotas) {
      out << "ledger_cluster_queue_admitted" << queueLabels(q.name, row) << ' '
          << value(row.admitted, row.admittedUnrepresentable) << '\n';
    }
  }
  header(out, "ledger_cluster_queue_nominal_quota",
         "The ClusterQueue's nominal quota (Kueue: kueue_cluster_queue_nominal_quota).");
  for (const auto& q : report.clusterQueues) {
    for (const auto& row : q.quotas) {
      out << "ledger_cluster_queue_nominal_quota" << queueLabels(q.name, row) << ' '
          << exactDecimal(row.nominal) << '\n';
    }
  }
}

// What pods hold through ResourceClaims, and the part of it beyond their
// Workloads' charge: keyed as `report`'s held integral is, so that the
// integral of the gauge over a period is that report's held hours.
void heldRows(std::ostringstream& out, const StateReport& report) {
  auto labels = [](const replay::HeldRow& h) {
    return "{cluster_queue=\"" + net::labelValue(h.clusterQueue) + "\",flavor=\"" +
           net::labelValue(h.flavor) + "\",resource=\"" + net::labelValue(h.resource) + "\"}";
  };
  header(out, "ledger_cluster_queue_held",
         "Quota resources the pods of the ClusterQueue's workloads hold through allocated "
         "ResourceClaims (cluster_queue \"-\": pods of no admitted Workload; flavor \"-\": "
         "no single flavor charges it).");
  for (const auto& h : report.held) {
    out << "ledger_cluster_queue_held" << labels(h) << ' ' << value(h.held, h.heldUnrepresentable)
        << '\n';
  }
  header(out, "ledger_cluster_queue_uncharged",
         "The part of ledger_cluster_queue_held beyond what the holding workloads are charged "
         "(summed per workload: max(0, held - reserved)).");
  for (const auto& h : report.held) {
    out << "ledger_cluster_queue_uncharged" << labels(h) << ' '
        << value(h.uncharged, h.unchargedUnrepresentable) << '\n';
  }
}

// "namespace/name" of each workload -> its ClusterQueue.
std::map<std::string, std::string> workloadQueues(const StateReport& report) {
  std::map<std::string, std::string> out;
  for (const auto& w : report.workloads) out[w.ns + "/" + w.name] = w.clusterQueue;
  return out;
}

std::string queueOf(const std::map<std::string, std::string>& workloads,
                    const replay::Finding& finding) {
  // Finding::object is "Kind name" or "Kind namespace/name" (objectRef).
  const auto space = finding.object.find(' ');
  if (space == std::string::npos) return {};
  const std::string_view kind(finding.object.data(), space);
  const std::string ref = finding.object.substr(space + 1);
  if (kind == "ClusterQueue") return ref;
  if (kind != "Workload") return {};
  auto it = workloads.find(ref);
  return it == workloads.end() ? std::string() : it->second;
}

void findings(std::ostringstream& out, const StateReport& report) {
  std::map<std::pair<std::string, std::string>, std::uint64_t> open;  // (type, queue)
  for (const char* type : kFindingTypes) {
    open[{type, ""}] = 0;
    for (const auto& q : report.clusterQueues) open[{type, q.name}] = 0;
  }
  const auto queues = workloadQueues(report);
  for (const auto& f : report.findings) ++open[{f.type, queueOf(queues, f)}];
  header(out, "ledger_open_findings",
         "Audit findings open in the folded state, by type and ClusterQueue "
         "(\"\": about a pool, device or cohort).");
  for (const auto& [key, n] : open) {
    out << "ledger_open_findings{type=\"" << net::labelValue(key.first) << "\",cluster_queue=\""
        << net::labelValue(key.second) << "\"} " << n << '\n';
  }
}

void pools(std::ostringstream& out, const StateReport& report) {
  header(out, "ledger_pool_devices", "Devices the pool's current ResourceSlices publish.");
  for (const auto& p : report.pools) {
    out << "ledger_pool_devices{" << poolLabels(p) << "} " << p.devices << '\n';
  }
  header(out, "ledger_pool_allocated_devices", "Devices of the pool allocated to ResourceClaims.");
  for (const auto& p : report.pools) {
    out << "ledger_pool_allocated_devices{" << poolLabels(p) << "} " << p.allocations.size()
        << '\n';
  }
  auto counters = [&](const char* name, bool consumed) {
    for (const auto& p : report.pools) {
      for (const auto& c : p.counters) {
        out << name << '{' << poolLabels(p) << ",counter_set=\"" << net::labelValue(c.counterSet)
            << "\",counter=\"" << net::labelValue(c.counter) << "\"} "
            << (consumed ? value(c.consumed, c.consumedUnrepresentable) : exactDecimal(c.capacity))
            << '\n';
      }
    }
  };
  header(out, "ledger_pool_consumed",
         "Shared counter consumed by the pool's allocated devices (KEP-4815 partitionable "
         "devices).");
  counters("ledger_pool_consumed", true);
  header(out, "ledger_pool_capacity", "Shared counter capacity the pool publishes.");
  counters("ledger_pool_capacity", false);
}

}  // namespace

std::string exactDecimal(const Quantity& q) {
  // From the exact nano count: no rounding through a double on the way.
  constexpr Int128 kNano = 1000000000;
  // Divided first, so that negating cannot overflow (|nanos / 10^9| < 2^127).
  const bool negative = q.isNegative();
  Int128 whole = q.nanos() / kNano;
  auto frac = static_cast<std::int64_t>(q.nanos() % kNano);
  if (negative) {
    whole = -whole;
    frac = -frac;
  }
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(whole % 10)));
    whole /= 10;
  } while (whole != 0);
  std::string out = negative ? std::string("-") : std::string();
  out += digits;
  if (frac != 0) {
    std::string f = std::to_string(frac);
    f.insert(0, 9 - f.size(), '0');
    while (f.back() == '0') f.pop_back();
    out += '.';
    out += f;
  }
  return out;
}

std::string findingClusterQueue(const StateReport& report, const replay::Finding& finding) {
  return queueOf(workloadQueues(report), finding);
}

std::string reportToMetrics(const StateReport& report) {
  std::ostringstream out;
  quotaRows(out, report);
  heldRows(out, report);
  findings(out, report);
  pools(out, report);
  header(out, "ledger_state_seq", "The last ledger record folded into the metrics above.");
  out << "ledger_state_seq " << report.seq << '\n';
  return out.str();
}

}  // namespace ledger::render
