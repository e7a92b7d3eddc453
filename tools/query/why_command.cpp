#include "tools/query/why_command.h"

#include <nlohmann/json.hpp>

#include "replay/history/why.h"
#include "schema/k8s/rfc3339.h"
#include "tools/progress.h"
#include "tools/render/report_format.h"

namespace ledger::cli {

namespace {

namespace hist = replay::history;

nlohmann::ordered_json intervalJson(const hist::WhyInterval& i) {
  nlohmann::ordered_json j;
  j["from"] = formatRfc3339(i.fromNs);
  j["to"] = i.toNs ? nlohmann::ordered_json(formatRfc3339(*i.toNs)) : nlohmann::ordered_json();
  j["state"] = i.state;
  j["reason"] = i.reason;
  j["blockedBy"] = nlohmann::ordered_json::array();
  for (const auto& h : i.blockedBy) {
    j["blockedBy"].push_back({{"workload", h.workload},
                              {"clusterQueue", h.clusterQueue},
                              {"priority", h.priority},
                              {"flavor", h.flavor},
                              {"resource", h.resource},
                              {"amount", h.amount}});
  }
  j["shortfalls"] = i.shortfalls;
  return j;
}

// A string, or null when empty.
nlohmann::ordered_json orNull(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s);
}

nlohmann::ordered_json evictionJson(const hist::EvictionExplained& e) {
  nlohmann::ordered_json j;
  j["at"] = formatRfc3339(e.atNs);
  j["seq"] = e.seq;
  j["reason"] = e.reason;
  j["preemptor"] = orNull(e.preemptor);
  j["preemptorFrom"] = orNull(e.preemptorFrom);
  j["policy"] = orNull(e.policy);
  j["conforms"] = e.conforms ? nlohmann::ordered_json(*e.conforms) : nlohmann::ordered_json();
  j["explanation"] = e.explanation;
  return j;
}

std::string blockedText(const hist::WhyInterval& i) {
  std::string s;
  for (const auto& h : i.blockedBy) {
    s += (s.empty() ? "" : ", ") + h.workload + " " + h.resource + "=" + h.amount;
  }
  // Nothing held what it lacked (it could not even be tried): what `admit`
  // said instead.
  if (s.empty() && !i.shortfalls.empty()) s = i.shortfalls.front();
  return s.empty() ? "-" : s;
}

void printTables(const hist::WhyReport& r, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& i : r.intervals) {
    rows.push_back({formatRfc3339(i.fromNs), i.toNs ? formatRfc3339(*i.toNs) : "-", i.state,
                    i.reason.empty() ? "-" : i.reason, blockedText(i)});
  }
  out << "Workload " << r.workload << "\n"
      << render::renderTable({"FROM", "TO", "STATE", "REASON", "BLOCKED BY"}, rows);
  if (r.evictions.empty()) return;
  rows.clear();
  for (const auto& e : r.evictions) {
    rows.push_back({formatRfc3339(e.atNs), e.reason.empty() ? "-" : e.reason,
                    e.preemptor.empty() ? "-" : e.preemptor, e.policy.empty() ? "-" : e.policy,
                    e.conforms ? (*e.conforms ? "yes" : "NO") : "-", e.explanation});
  }
  out << "\nEvictions\n"
      << render::renderTable({"AT", "REASON", "PREEMPTOR", "POLICY", "CONFORMS", "EXPLANATION"},
                             rows);
  for (const auto& f : r.findings) out << "\n" << f.type << ": " << f.message << "\n";
}

}  // namespace

int runWhy(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  const auto slash = args.target.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == args.target.size()) {
    throw UsageError("why: give the workload as NAMESPACE/NAME, not '" + args.target + "'");
  }
  if (args.from && args.to && *args.to < *args.from) throw UsageError("--to is before --from");
  ProgressBar progress("why");
  replay::FoldOptions fo;
  fo.useCheckpoints = args.useCheckpoints;
  fo.onBadCheckpoint = warnBadCheckpoint;
  const hist::WhyReport r = hist::explainWorkload(
      ledger, args.target.substr(0, slash), args.target.substr(slash + 1), args.from, args.to, fo);
  progress.done();
  if (!r.found) throw UnknownWorkload("workload " + args.target + " does not appear in the ledger");
  if (args.output != OutputFormat::kJson) {
    printTables(r, out);
    return kExitOk;
  }
  nlohmann::ordered_json j;
  j["workload"] = r.workload;
  j["intervals"] = nlohmann::ordered_json::array();
  for (const auto& i : r.intervals) j["intervals"].push_back(intervalJson(i));
  j["evictions"] = nlohmann::ordered_json::array();
  for (const auto& e : r.evictions) j["evictions"].push_back(evictionJson(e));
  j["findings"] = nlohmann::ordered_json::array();
  for (const auto& f : r.findings) {
    j["findings"].push_back({{"type", f.type}, {"object", f.object}, {"message", f.message}});
  }
  out << j.dump(2) << "\n";
  return kExitOk;
}

}  // namespace ledger::cli
