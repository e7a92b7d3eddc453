#include "tools/render/report_format.h"

#include <sstream>

#include "schema/k8s/rfc3339.h"

namespace ledger::render {

using namespace ledger::replay;

namespace {

using OJ = nlohmann::ordered_json;

OJ resources(const ResourceList& list) {
  OJ j = OJ::object();
  for (const auto& [name, q] : list) j[name] = q.toString();
  return j;
}

OJ optionalQuantity(const std::optional<Quantity>& q) {
  return q ? OJ(q->toString()) : OJ(nullptr);
}

// A sum past the exact range (QuantityOverflow) is shown as such, never as
// the number it was when the range ran out.
OJ exactOrNull(const Quantity& q, bool unrepresentable) {
  return unrepresentable ? OJ(nullptr) : OJ(q.toString());
}

std::string exactOrText(const Quantity& q, bool unrepresentable) {
  return unrepresentable ? "unrepresentable" : q.toString();
}

std::string joinResources(const ResourceList& list) {
  std::string out;
  for (const auto& [name, q] : list) out += (out.empty() ? "" : ",") + name + "=" + q.toString();
  return out.empty() ? "-" : out;
}

}  // namespace

OJ atToJson(std::uint64_t seq, std::int64_t timeNs) {
  return OJ{{"seq", seq}, {"time", seq == 0 ? OJ(nullptr) : OJ(formatRfc3339(timeNs))}};
}

OJ clusterQueueToJson(const ClusterQueueReport& q) {
  OJ rows = OJ::array();
  for (const auto& r : q.quotas) {
    rows.push_back(OJ{{"flavor", r.flavor},
                      {"resource", r.resource},
                      {"nominal", r.nominal.toString()},
                      {"borrowingLimit", optionalQuantity(r.borrowingLimit)},
                      {"lendingLimit", optionalQuantity(r.lendingLimit)},
                      {"reserved", exactOrNull(r.reserved, r.reservedUnrepresentable)},
                      {"admitted", exactOrNull(r.admitted, r.admittedUnrepresentable)}});
  }
  OJ held = OJ::array();
  for (const auto& h : q.heldCounters) {
    held.push_back(OJ{{"driver", h.driver},
                      {"counter", h.counter},
                      {"consumed", exactOrNull(h.consumed, h.consumedUnrepresentable)}});
  }
  return OJ{
      {"name", q.name},
      {"cohort", q.cohort},
      {"quotas", rows},
      {"workloads", OJ{{"pending", q.pending}, {"reserved", q.reserved}, {"admitted", q.admitted}}},
      {"draHeld", OJ{{"devices", q.heldDevices}, {"counters", held}}}};
}

OJ reportToJson(const StateReport& report) {
  OJ j;
  j["at"] = atToJson(report.seq, report.timeNs);
  j["digest"] = report.digest;
  OJ cqs = OJ::array();
  for (const auto& q : report.clusterQueues) cqs.push_back(clusterQueueToJson(q));
  j["clusterQueues"] = cqs;
  OJ wls = OJ::array();
  for (const auto& w : report.workloads) {
    OJ wl{{"namespace", w.ns},
          {"name", w.name},
          {"uid", w.uid},
          {"clusterQueue", w.clusterQueue},
          {"localQueue", w.localQueue},
          {"state", w.state},
          {"recorded", resources(w.recorded)},
          {"computed", resources(w.computed)},
          {"computedAt", atToJson(w.computedAtSeq, w.computedAtNs)},
          {"errors", w.errors}};
    if (w.hasCurrent) {
      wl["current"] = OJ{{"computed", resources(w.currentComputed)}, {"errors", w.currentErrors}};
    }
    wls.push_back(std::move(wl));
  }
  j["workloads"] = wls;
  OJ pools = OJ::array();
  for (const auto& p : report.pools) {
    OJ counters = OJ::array();
    for (const auto& c : p.counters) {
      counters.push_back(OJ{{"counterSet", c.counterSet},
                            {"counter", c.counter},
                            {"capacity", c.capacity.toString()},
                            {"consumed", exactOrNull(c.consumed, c.consumedUnrepresentable)}});
    }
    OJ allocations = OJ::array();
    for (const auto& a : p.allocations) {
      allocations.push_back(
          OJ{{"device", a.device},
             {"request", a.request},
             {"claim", a.claim},
             {"pod", a.pod.empty() ? OJ(nullptr) : OJ(a.pod)},
             {"workload", a.workload.empty() ? OJ(nullptr) : OJ(a.workload)},
             {"clusterQueue", a.clusterQueue.empty() ? OJ(nullptr) : OJ(a.clusterQueue)},
             {"published", a.published}});
    }
    pools.push_back(OJ{{"driver", p.driver},
                       {"pool", p.pool},
                       {"generation", p.generation},
                       {"complete", p.complete},
                       {"resourceSliceCount", p.resourceSliceCount},
                       {"devices", p.devices},
                       {"counters", counters},
                       {"allocations", allocations}});
  }
  j["pools"] = pools;
  OJ findings = OJ::array();
  for (const auto& f : report.findings) {
    findings.push_back(OJ{{"type", f.type}, {"object", f.object}, {"message", f.message}});
  }
  j["findings"] = findings;
  if (report.config) {
    const ConfigReport& c = *report.config;
    j["config"] = OJ{{"mappingSource", c.mappingSource.empty() ? OJ(nullptr) : OJ(c.mappingSource)},
                     {"changedAt", atToJson(c.changedAtSeq, c.changedAtNs)},
                     {"effectiveAt", atToJson(c.effectiveAtSeq, c.effectiveAtNs)},
                     {"effective", c.controllerRestart ? "controllerRestart" : "eventTime"}};
  }
  return j;
}

std::string renderTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(headers.size());
  for (std::size_t i = 0; i < headers.size(); ++i) width[i] = headers[i].size();
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  }
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      text += cells[i];
      if (i + 1 < cells.size()) text += std::string(width[i] - cells[i].size() + 3, ' ');
    }
    out << text << "\n";
  };
  line(headers);
  for (const auto& r : rows) line(r);
  return out.str();
}

std::string clusterQueuesToTable(const std::vector<ClusterQueueReport>& queues) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : queues) {
    for (const auto& r : q.quotas) {
      rows.push_back({q.name, q.cohort.empty() ? "-" : q.cohort, r.flavor, r.resource,
                      r.nominal.toString(), exactOrText(r.reserved, r.reservedUnrepresentable),
                      exactOrText(r.admitted, r.admittedUnrepresentable),
                      std::to_string(q.pending) + "/" + std::to_string(q.reserved) + "/" +
                          std::to_string(q.admitted)});
    }
  }
  return renderTable({"CLUSTERQUEUE", "COHORT", "FLAVOR", "RESOURCE", "NOMINAL", "RESERVED",
                      "ADMITTED", "PENDING/RESERVED/ADMITTED"},
                     rows);
}

std::string reportToTable(const StateReport& report) {
  std::ostringstream out;
  out << "At seq " << report.seq;
  if (report.seq != 0) out << " (" << formatRfc3339(report.timeNs) << ")";
  out << ", state digest " << report.digest.substr(0, 16) << "\n\n";
  out << clusterQueuesToTable(report.clusterQueues) << "\n";
  std::vector<std::vector<std::string>> wl;
  for (const auto& w : report.workloads) {
    wl.push_back({w.ns, w.name, w.clusterQueue.empty() ? "-" : w.clusterQueue, w.state,
                  joinResources(w.recorded), joinResources(w.computed),
                  w.errors.empty() ? "-" : std::to_string(w.errors.size())});
  }
  out << renderTable(
             {"NAMESPACE", "WORKLOAD", "CLUSTERQUEUE", "STATE", "RECORDED", "COMPUTED", "ERRORS"},
             wl)
      << "\n";
  for (const auto& w : report.workloads) {
    for (const auto& e : w.errors) out << "error: " << w.ns << "/" << w.name << ": " << e << "\n";
  }
  std::vector<std::vector<std::string>> pools;
  for (const auto& p : report.pools) {
    std::string counters;
    for (const auto& c : p.counters) {
      counters += (counters.empty() ? "" : " ") + c.counterSet + "/" + c.counter + "=" +
                  exactOrText(c.consumed, c.consumedUnrepresentable) + "/" + c.capacity.toString();
    }
    pools.push_back({p.driver, p.pool, std::to_string(p.generation), p.complete ? "yes" : "no",
                     std::to_string(p.devices), std::to_string(p.allocations.size()),
                     counters.empty() ? "-" : counters});
  }
  out << renderTable({"DRIVER", "POOL", "GENERATION", "COMPLETE", "DEVICES", "ALLOCATED",
                      "COUNTERS (consumed/capacity)"},
                     pools)
      << "\n";
  std::vector<std::vector<std::string>> findings;
  for (const auto& f : report.findings) findings.push_back({f.type, f.object, f.message});
  if (findings.empty()) {
    out << "No findings.\n";
  } else {
    out << renderTable({"FINDING", "OBJECT", "MESSAGE"}, findings);
  }
  return out.str();
}

}  // namespace ledger::render
