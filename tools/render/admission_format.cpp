#include "tools/render/admission_format.h"

#include <sstream>

#include "tools/render/report_format.h"

namespace ledger::render {

using namespace ledger::replay::admission;

namespace {

using OJ = nlohmann::ordered_json;

OJ optional(const std::optional<std::string>& v) { return v ? OJ(*v) : OJ(nullptr); }

OJ podSetToJson(const PodSetReport& ps) {
  OJ requests = OJ::object();
  for (const auto& [name, q] : ps.requests) requests[name] = q;
  OJ flavors = OJ::array();
  for (const auto& f : ps.flavors) {
    flavors.push_back(OJ{{"resource", f.resource},
                         {"flavor", f.flavor},
                         {"mode", f.mode},
                         {"borrowed", optional(f.borrowed)},
                         {"cohort", optional(f.cohort)}});
  }
  OJ shortfalls = OJ::array();
  for (const auto& s : ps.shortfalls) {
    shortfalls.push_back(OJ{{"resource", s.resource},
                            {"flavor", s.flavor},
                            {"requested", s.requested},
                            {"available", s.available},
                            {"short", s.shortBy},
                            {"reason", s.reason},
                            {"kueueMessage", s.kueueMessage}});
  }
  OJ rejected = OJ::array();
  for (const auto& r : ps.rejectedFlavors) {
    rejected.push_back(OJ{{"flavor", r.flavor}, {"reason", r.reason}});
  }
  return OJ{{"name", ps.name},
            {"count", ps.count},
            {"evaluated", ps.evaluated},
            {"requests", requests},
            {"flavors", flavors},
            {"shortfalls", shortfalls},
            {"rejectedFlavors", rejected}};
}

std::string yesNo(bool b) { return b ? "yes" : "no"; }

}  // namespace

OJ admissionToJson(const AdmissionReport& r) {
  OJ j;
  j["at"] = atToJson(r.seq, r.timeNs);
  j["workload"] = r.workload;
  j["source"] = r.source;
  j["state"] = r.state;
  j["priority"] = r.priority;
  j["localQueue"] = r.localQueue;
  j["clusterQueue"] = r.clusterQueue;
  j["cohort"] = r.cohort.empty() ? OJ(nullptr) : OJ(r.cohort);
  j["fits"] = r.fits;
  j["inadmissible"] = optional(r.inadmissible);
  j["wouldNeedPreemption"] = r.wouldNeedPreemption;
  j["borrows"] = r.borrows;
  j["message"] = r.message;
  OJ podSets = OJ::array();
  for (const auto& ps : r.podSets) podSets.push_back(podSetToJson(ps));
  j["podSets"] = podSets;
  OJ candidates = OJ::array();
  for (const auto& c : r.preemptionCandidates) {
    OJ holds = OJ::object();
    for (const auto& [flavor, list] : c.holds) {
      OJ res = OJ::object();
      for (const auto& [name, q] : list) res[name] = q;
      holds[flavor] = res;
    }
    candidates.push_back(OJ{{"workload", c.workload},
                            {"priority", c.priority},
                            {"clusterQueue", c.clusterQueue},
                            {"allowedByPolicy", c.allowedByPolicy},
                            {"policy", c.policy},
                            {"holds", holds}});
  }
  j["preemptionCandidates"] = candidates;
  j["warnings"] = r.warnings;
  return j;
}

std::string admissionToTable(const AdmissionReport& r) {
  std::ostringstream out;
  out << "WORKLOAD      " << r.workload << " (" << r.source << ", " << r.state << ", priority "
      << r.priority << ")\n";
  const auto time = atToJson(r.seq, r.timeNs)["time"];
  out << "AT            seq " << r.seq << " " << (time.is_string() ? time.get<std::string>() : "-")
      << "\n";
  out << "CLUSTERQUEUE  " << (r.clusterQueue.empty() ? "-" : r.clusterQueue)
      << (r.cohort.empty() ? "" : " (cohort " + r.cohort + ")") << "\n";
  out << "FITS          " << yesNo(r.fits);
  if (r.wouldNeedPreemption) out << " (would need preemption)";
  if (r.borrows) out << " (borrows)";
  out << "\n";
  if (r.inadmissible) out << "INADMISSIBLE  " << *r.inadmissible << "\n";
  if (!r.message.empty()) out << "MESSAGE       " << r.message << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& ps : r.podSets) {
    if (!ps.evaluated) {
      rows.push_back({ps.name, "-", "-", "not evaluated", "-"});
      continue;
    }
    for (const auto& f : ps.flavors) {
      std::string detail =
          f.borrowed ? "borrows " + *f.borrowed + " from " + f.cohort.value_or("") : "";
      rows.push_back({ps.name, f.resource, f.flavor, f.mode, detail.empty() ? "-" : detail});
    }
    for (const auto& s : ps.shortfalls) {
      rows.push_back({ps.name, s.resource, s.flavor, "short " + s.shortBy, s.reason});
    }
    for (const auto& x : ps.rejectedFlavors) {
      rows.push_back({ps.name, "-", x.flavor, "rejected", x.reason});
    }
  }
  if (!rows.empty()) {
    out << "\n" << renderTable({"POD SET", "RESOURCE", "FLAVOR", "MODE", "DETAIL"}, rows);
  }
  if (!r.preemptionCandidates.empty()) {
    std::vector<std::vector<std::string>> cands;
    for (const auto& c : r.preemptionCandidates) {
      std::string holds;
      for (const auto& [flavor, list] : c.holds) {
        for (const auto& [name, q] : list) {
          holds += (holds.empty() ? "" : ", ") + flavor + "/" + name + "=" + q;
        }
      }
      cands.push_back({c.workload, std::to_string(c.priority), c.clusterQueue,
                       c.allowedByPolicy ? "yes" : "no (" + c.policy + ")", holds});
    }
    out << "\nPREEMPTION CANDIDATES\n"
        << renderTable({"WORKLOAD", "PRIORITY", "CLUSTERQUEUE", "ALLOWED", "HOLDS"}, cands);
  }
  for (const auto& w : r.warnings) out << "warning: " << w << "\n";
  return out.str();
}

}  // namespace ledger::render
