#include "tools/render/report_format.h"

#include <sstream>

#include "replay/kueue/usage_report.h"
#include "schema/k8s/rfc3339.h"
#include "tools/render/json_text.h"

namespace ledger::render {

using namespace ledger::replay;

namespace {

using OJ = nlohmann::ordered_json;

std::string exactOrText(const Quantity& q, bool unrepresentable) {
  return unrepresentable ? "unrepresentable" : q.toString();
}

std::string joinResources(const ResourceList& list) {
  std::string out;
  for (const auto& [name, q] : list) out += (out.empty() ? "" : ",") + name + "=" + q.toString();
  return out.empty() ? "-" : out;
}

void writeResources(JsonText& j, const ResourceList& list) {
  j.beginObject();
  for (const auto& [name, q] : list) {
    j.key(name);
    j.string(q.toString());
  }
  j.endObject();
}

void writeOptionalQuantity(JsonText& j, const std::optional<Quantity>& q) {
  if (q) {
    j.string(q->toString());
  } else {
    j.null();
  }
}

// A sum past the exact range (QuantityOverflow) is shown as such, never as
// the number it was when the range ran out.
void writeExactOrNull(JsonText& j, const Quantity& q, bool unrepresentable) {
  if (unrepresentable) {
    j.null();
  } else {
    j.string(q.toString());
  }
}

void writeStringOrNull(JsonText& j, const std::string& s) {
  if (s.empty()) {
    j.null();
  } else {
    j.string(s);
  }
}

void writeStrings(JsonText& j, const std::vector<std::string>& list) {
  j.beginArray();
  for (const auto& s : list) j.string(s);
  j.endArray();
}

void writeAt(JsonText& j, std::uint64_t seq, std::int64_t timeNs) {
  j.beginObject();
  j.key("seq");
  j.number(seq);
  j.key("time");
  if (seq == 0) {
    j.null();
  } else {
    j.string(formatRfc3339(timeNs));
  }
  j.endObject();
}

void writeClusterQueue(JsonText& j, const ClusterQueueReport& q) {
  j.beginObject();
  j.key("name");
  j.string(q.name);
  j.key("cohort");
  j.string(q.cohort);
  j.key("quotas");
  j.beginArray();
  for (const auto& r : q.quotas) {
    j.beginObject();
    j.key("flavor");
    j.string(r.flavor);
    j.key("resource");
    j.string(r.resource);
    j.key("nominal");
    j.string(r.nominal.toString());
    j.key("borrowingLimit");
    writeOptionalQuantity(j, r.borrowingLimit);
    j.key("lendingLimit");
    writeOptionalQuantity(j, r.lendingLimit);
    j.key("reserved");
    writeExactOrNull(j, r.reserved, r.reservedUnrepresentable);
    j.key("admitted");
    writeExactOrNull(j, r.admitted, r.admittedUnrepresentable);
    j.endObject();
  }
  j.endArray();
  j.key("workloads");
  j.beginObject();
  j.key("pending");
  j.number(q.pending);
  j.key("reserved");
  j.number(q.reserved);
  j.key("admitted");
  j.number(q.admitted);
  j.endObject();
  j.key("draHeld");
  j.beginObject();
  j.key("devices");
  j.number(q.heldDevices);
  j.key("counters");
  j.beginArray();
  for (const auto& h : q.heldCounters) {
    j.beginObject();
    j.key("driver");
    j.string(h.driver);
    j.key("counter");
    j.string(h.counter);
    j.key("consumed");
    writeExactOrNull(j, h.consumed, h.consumedUnrepresentable);
    j.endObject();
  }
  j.endArray();
  j.key("quota");
  j.beginArray();
  for (const auto& h : q.held) {
    j.beginObject();
    j.key("flavor");
    j.string(h.flavor);
    j.key("resource");
    j.string(h.resource);
    j.key("held");
    writeExactOrNull(j, h.held, h.heldUnrepresentable);
    j.key("uncharged");
    writeExactOrNull(j, h.uncharged, h.unchargedUnrepresentable);
    j.endObject();
  }
  j.endArray();
  j.endObject();
  j.endObject();
}

void writeWorkload(JsonText& j, const replay::WorkloadReport& w) {
  j.beginObject();
  j.key("namespace");
  j.string(w.ns);
  j.key("name");
  j.string(w.name);
  j.key("uid");
  j.string(w.uid);
  j.key("clusterQueue");
  j.string(w.clusterQueue);
  j.key("localQueue");
  j.string(w.localQueue);
  j.key("state");
  j.string(w.state);
  j.key("recorded");
  writeResources(j, w.recorded);
  j.key("computed");
  writeResources(j, w.computed);
  j.key("computedAt");
  if (w.computedAtSnapshot) {
    // Reserved before the ledger saw it: judged on the first state that
    // holds its snapshot (docs/reference.md "Observation").
    j.beginObject();
    j.key("seq");
    j.number(w.computedAtSeq);
    j.key("time");
    j.string(formatRfc3339(w.computedAtNs));
    j.key("basis");
    j.string("snapshot");
    j.key("reservedAt");
    if (w.reservedAtNs != 0) {
      j.string(formatRfc3339(w.reservedAtNs));
    } else {
      j.null();
    }
    j.endObject();
  } else {
    writeAt(j, w.computedAtSeq, w.computedAtNs);
  }
  j.key("errors");
  writeStrings(j, w.errors);
  if (w.hasCurrent) {
    j.key("current");
    j.beginObject();
    j.key("computed");
    writeResources(j, w.currentComputed);
    j.key("errors");
    writeStrings(j, w.currentErrors);
    j.endObject();
  }
  j.endObject();
}

void writePool(JsonText& j, const replay::PoolReport& p) {
  j.beginObject();
  j.key("driver");
  j.string(p.driver);
  j.key("pool");
  j.string(p.pool);
  j.key("generation");
  j.number(p.generation);
  j.key("complete");
  j.boolean(p.complete);
  j.key("resourceSliceCount");
  j.number(p.resourceSliceCount);
  j.key("devices");
  j.number(p.devices);
  j.key("counters");
  j.beginArray();
  for (const auto& c : p.counters) {
    j.beginObject();
    j.key("counterSet");
    j.string(c.counterSet);
    j.key("counter");
    j.string(c.counter);
    j.key("capacity");
    j.string(c.capacity.toString());
    j.key("consumed");
    writeExactOrNull(j, c.consumed, c.consumedUnrepresentable);
    j.endObject();
  }
  j.endArray();
  j.key("allocations");
  j.beginArray();
  for (const auto& a : p.allocations) {
    j.beginObject();
    j.key("device");
    j.string(a.device);
    j.key("request");
    j.string(a.request);
    j.key("claim");
    j.string(a.claim);
    j.key("pod");
    writeStringOrNull(j, a.pod);
    j.key("workload");
    writeStringOrNull(j, a.workload);
    j.key("clusterQueue");
    writeStringOrNull(j, a.clusterQueue);
    j.key("published");
    j.boolean(a.published);
    j.endObject();
  }
  j.endArray();
  j.endObject();
}

}  // namespace

OJ atToJson(std::uint64_t seq, std::int64_t timeNs) {
  JsonText j;
  writeAt(j, seq, timeNs);
  return OJ::parse(j.text());
}

OJ clusterQueueToJson(const ClusterQueueReport& q) {
  JsonText j;
  writeClusterQueue(j, q);
  return OJ::parse(j.text());
}

std::string reportJsonText(const StateReport& report) {
  JsonText j;
  j.beginObject();
  j.key("at");
  writeAt(j, report.seq, report.timeNs);
  j.key("digest");
  j.string(report.digest);
  j.key("clusterQueues");
  j.beginArray();
  for (const auto& q : report.clusterQueues) writeClusterQueue(j, q);
  j.endArray();
  j.key("workloads");
  j.beginArray();
  for (const auto& w : report.workloads) writeWorkload(j, w);
  j.endArray();
  j.key("pools");
  j.beginArray();
  for (const auto& p : report.pools) writePool(j, p);
  j.endArray();
  j.key("findings");
  j.beginArray();
  for (const auto& f : report.findings) {
    j.beginObject();
    j.key("type");
    j.string(f.type);
    j.key("object");
    j.string(f.object);
    j.key("message");
    j.string(f.message);
    j.endObject();
  }
  j.endArray();
  if (report.config) {
    const replay::ConfigReport& c = *report.config;
    j.key("config");
    j.beginObject();
    j.key("mappingSource");
    writeStringOrNull(j, c.mappingSource);
    j.key("changedAt");
    writeAt(j, c.changedAtSeq, c.changedAtNs);
    j.key("effectiveAt");
    writeAt(j, c.effectiveAtSeq, c.effectiveAtNs);
    j.key("effective");
    j.string(c.controllerRestart ? "controllerRestart" : "eventTime");
    j.endObject();
  }
  j.endObject();
  return j.take();
}

OJ reportToJson(const StateReport& report) { return OJ::parse(reportJsonText(report)); }

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

// One line per pool: at a real cluster's size a pool publishes dozens of
// counters, and listing them all made lines thousands of characters long.
// The default says how many counters there are and how many are used up;
// --wide lists them.
std::string poolsToTable(const std::vector<replay::PoolReport>& pools,
                         const TableOptions& options) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : pools) {
    std::string counters;
    int full = 0;
    for (const auto& c : p.counters) {
      if (!c.consumedUnrepresentable && c.consumed >= c.capacity) ++full;
      counters += (counters.empty() ? "" : " ") + c.counterSet + "/" + c.counter + "=" +
                  exactOrText(c.consumed, c.consumedUnrepresentable) + "/" + c.capacity.toString();
    }
    std::vector<std::string> row = {p.driver,
                                    p.pool,
                                    std::to_string(p.generation),
                                    p.complete ? "yes" : "no",
                                    std::to_string(p.devices),
                                    std::to_string(p.allocations.size())};
    if (options.wide) {
      row.push_back(counters.empty() ? "-" : counters);
    } else {
      row.push_back(std::to_string(p.counters.size()));
      row.push_back(std::to_string(full));
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::string> headers = {"DRIVER",   "POOL",    "GENERATION",
                                      "COMPLETE", "DEVICES", "ALLOCATED"};
  if (options.wide) {
    headers.push_back("COUNTERS (consumed/capacity)");
  } else {
    headers.insert(headers.end(), {"COUNTERS", "USED-UP"});
  }
  return renderTable(headers, rows);
}

// The queues, workloads (with their errors) and pools tables.
static std::string tablesBeforeFindings(const StateReport& report, const TableOptions& options) {
  std::ostringstream out;
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
  out << poolsToTable(report.pools, options) << "\n";
  return out.str();
}

std::string reportToTable(const StateReport& report, const TableOptions& options) {
  std::ostringstream out;
  out << "At seq " << report.seq;
  if (report.seq != 0) out << " (" << formatRfc3339(report.timeNs) << ")";
  out << ", state digest " << report.digest.substr(0, 16) << "\n\n";
  if (!options.findingsOnly) out << tablesBeforeFindings(report, options);
  std::vector<std::vector<std::string>> findings;
  for (const auto& f : report.findings) findings.push_back({f.type, f.object, f.message});
  if (findings.empty()) {
    out << "No findings.\n";
  } else {
    out << renderTable({"FINDING", "OBJECT", "MESSAGE"}, findings);
  }
  return out.str();
}

std::string utilisationText(const replay::Integral& reserved,
                            const std::optional<replay::Integral>& quota) {
  return quota ? replay::utilisation(reserved, *quota) : std::string();
}

void putUsageIntegrals(nlohmann::ordered_json& row, const replay::Integral& reserved,
                       const std::optional<replay::Integral>& quota) {
  row["reservedResourceSeconds"] = reserved.seconds();
  row["reservedResourceHours"] = reserved.hours();
  row["quotaResourceSeconds"] =
      quota ? nlohmann::ordered_json(quota->seconds()) : nlohmann::ordered_json(nullptr);
  const std::string u = utilisationText(reserved, quota);
  row["utilisation"] = u.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(u);
}

void putHeldIntegrals(nlohmann::ordered_json& row, const replay::UsageRow& r) {
  if (!r.dra) return;
  row["heldResourceSeconds"] = r.held.seconds();
  row["heldResourceHours"] = r.held.hours();
  row["unchargedResourceSeconds"] = r.uncharged.seconds();
  row["unchargedResourceHours"] = r.uncharged.hours();
}

std::string hoursText(const replay::Integral& integral, const std::string& resource) {
  const bool bytes = replay::isByteResource(resource);
  return integral.hours(bytes ? Int128(1) << 30 : 1) + (bytes ? " GiB-h" : " h");
}

}  // namespace ledger::render
