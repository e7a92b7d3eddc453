#include "tools/serve/ledger_api.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"

namespace ledger::serve {

namespace {

using nlohmann::json;

json parseAnswer(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw ApiError::internal("a query answered with malformed JSON");
  return j;
}

json stateAt(const Moment& moment, ServeContext& ctx) {
  QueryRequest q;
  q.command = "state";
  q.seq = moment.seq;
  // Records are immutable: the report after a seq is the same every time.
  return parseAnswer(*ctx.answers.get("state:" + std::to_string(moment.seq),
                                      [&] { return ctx.query(ctx.ledger, q); }));
}

json ownObject(const char* kind, const std::string& ns, const std::string& name,
               const Moment& moment) {
  json metadata = {{"name", name}, {"resourceVersion", std::to_string(moment.seq)}};
  if (!ns.empty()) metadata["namespace"] = ns;
  return {{"apiVersion", std::string(kLedgerGroup) + "/" + std::string(kLedgerVersion)},
          {"kind", kind},
          {"metadata", std::move(metadata)}};
}

// A DNS-label-like name from a finding's type and object ("UnchargedDRA",
// "Workload team-b/job-1" -> "uncharged-dra.workload.team-b.job-1").
std::string findingName(const std::string& type, const std::string& object) {
  std::string out;
  for (std::size_t i = 0; i < type.size(); ++i) {
    const char c = type[i];
    if (std::isupper(static_cast<unsigned char>(c)) && i > 0 &&
        std::islower(static_cast<unsigned char>(type[i - 1]))) {
      out.push_back('-');
    }
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  out.push_back('.');
  for (char c : object) {
    out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-'
                      ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                      : '.');
  }
  return out;
}

std::string usageSummary(const json& quotas) {
  std::string out;
  for (const auto& q : quotas) {
    if (!out.empty()) out += ", ";
    out += q.value("resource", "") + " " + q.value("reserved", "0") + "/" + q.value("nominal", "0");
  }
  return out;
}

// What the queue's pods hold through ResourceClaims per flavor and resource
// (draHeld.quota), the uncharged part named when there is one:
// "nvidia.com/gpu 1 (1 uncharged)". Empty when nothing is held.
std::string heldSummary(const json& draHeld) {
  std::string out;
  if (!draHeld.is_object() || !draHeld.contains("quota")) return out;
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : std::string("?"); };
  for (const auto& h : draHeld["quota"]) {
    if (!out.empty()) out += ", ";
    out += h.value("resource", "") + " " + text(h["held"]);
    const json& uncharged = h["uncharged"];
    if (!uncharged.is_string() || uncharged.get<std::string>() != "0") {
      out += " (" + text(uncharged) + " uncharged)";
    }
  }
  return out;
}

bool wanted(const json& object, std::string_view ns, std::string_view name) {
  const auto& m = object["metadata"];
  return (ns.empty() || m.value("namespace", "") == ns) &&
         (name.empty() || m.value("name", "") == name);
}

}  // namespace

std::vector<json> ledgerObjects(const ApiResource& r, const Moment& moment, ServeContext& ctx,
                                std::string_view ns, std::string_view name) {
  const json state = stateAt(moment, ctx);
  std::vector<json> out;
  if (r.kind == "QueueUsage") {
    for (const auto& cq : state["clusterQueues"]) {
      json o = ownObject("QueueUsage", "", cq.value("name", ""), moment);
      o["spec"] = {{"cohort", cq.contains("cohort") ? cq["cohort"] : json(nullptr)}};
      o["status"] = {{"quotas", cq["quotas"]},
                     {"workloads", cq["workloads"]},
                     {"draHeld", cq["draHeld"]},
                     {"summary", usageSummary(cq["quotas"])},
                     {"heldSummary", heldSummary(cq["draHeld"])},
                     {"at", state["at"]}};
      if (wanted(o, ns, name)) out.push_back(std::move(o));
    }
  } else if (r.kind == "LedgerFinding") {
    std::map<std::string, int> seen;
    for (const auto& f : state["findings"]) {
      std::string n = findingName(f.value("type", ""), f.value("object", ""));
      if (int k = ++seen[n]; k > 1) n += "." + std::to_string(k);
      json o = ownObject("LedgerFinding", "", n, moment);
      o["spec"] = f;
      if (wanted(o, ns, name)) out.push_back(std::move(o));
    }
  } else if (r.kind == "WorkloadHistory") {
    for (const auto& w : state["workloads"]) {
      json o = ownObject("WorkloadHistory", w.value("namespace", ""), w.value("name", ""), moment);
      o["status"] = {{"uid", w["uid"]},
                     {"clusterQueue", w["clusterQueue"]},
                     {"localQueue", w["localQueue"]},
                     {"state", w["state"]}};
      if (!wanted(o, ns, name)) continue;
      if (!name.empty()) {
        QueryRequest q;
        q.command = "workload";
        q.target = w.value("namespace", "") + "/" + w.value("name", "");
        json history = parseAnswer(ctx.query(ctx.ledger, q));
        o["status"]["recordCount"] = history["changes"].size();
        o["status"]["changes"] = std::move(history["changes"]);
      }
      out.push_back(std::move(o));
    }
  }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return std::make_pair(a["metadata"].value("namespace", ""), a["metadata"].value("name", "")) <
           std::make_pair(b["metadata"].value("namespace", ""), b["metadata"].value("name", ""));
  });
  return out;
}

ApiResponse handleLedgerRequest(const ApiRequest& req, ServeContext& ctx) {
  if (req.method != "GET" && req.method != "HEAD") {
    throw ApiError::methodNotAllowed("the ledger is read-only: " + req.method + " is not allowed");
  }
  const std::string_view what =
      std::string_view(req.path).substr(std::string_view("/ledger/v1/").size());
  if (what == "range") {
    const std::uint64_t last = ctx.ledger.lastSeq();
    json out = {{"firstSeq", last == 0 ? 0 : 1}, {"lastSeq", last}};
    if (last > 0) {
      std::int64_t first = 0, lastNs = 0;
      if (!ctx.ledger.timeOf(1, &first).isOk() || !ctx.ledger.timeOf(last, &lastNs).isOk()) {
        throw ApiError::internal("cannot read the times of the ledger's first and last records");
      }
      out["firstTime"] = formatRfc3339(first);
      out["lastTime"] = formatRfc3339(lastNs);
    }
    (ctx.proof != nullptr ? *ctx.proof : ProofState{}).addTo(out);
    return ApiResponse::ofJson(out.dump());
  }
  // The questions' error messages quote their arguments through C strings
  // (an exception's what()), which end at a NUL: a message about "a/b%00c"
  // named "a/b". No name or time holds one.
  for (const auto& [name, value] : req.query) {
    if (value.find('\0') != std::string::npos) {
      throw ApiError::badRequest("query parameter '" + name +
                                 "' holds a NUL byte (%00), which no name or time holds");
    }
  }
  QueryRequest q;
  q.command = std::string(what);
  if (what == "state") {
    q.seq = resolveMoment(req.param("at").value_or("now"), ctx.ledger, ctx.nowNs).seq;
  } else if (what == "usage") {
    q.from = req.param("from").value_or("");
    q.to = req.param("to").value_or("");
    q.step = req.param("step").value_or("");
    q.clusterQueue = req.param("clusterQueue").value_or("");
    if (q.from.empty() || q.to.empty() || q.step.empty()) {
      throw ApiError::badRequest("usage needs from, to and step (RFC 3339 times, a step like 5m)");
    }
  } else if (what == "report") {
    q.from = req.param("from").value_or("");
    q.to = req.param("to").value_or("");
    q.by = req.param("by").value_or("");
    q.clusterQueue = req.param("clusterQueue").value_or("");
    if (q.from.empty() || q.to.empty()) {
      throw ApiError::badRequest("report needs from and to (TIMEs; by as ledger-query --by)");
    }
  } else if (what == "workload") {
    q.target = req.param("target").value_or("");
    if (q.target.find('/') == std::string::npos) {
      throw ApiError::badRequest("workload needs target=NAMESPACE/NAME");
    }
  } else {
    throw ApiError::notFound("/ledger/v1/ serves range, state, usage, report and workload");
  }
  return ApiResponse::ofJson(ctx.query(ctx.ledger, q));
}

}  // namespace ledger::serve
