#include "tools/serve/ledger_api.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "ledger/format.h"
#include "ledger/object_index.h"
#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"
#include "tools/serve/workload_whys.h"

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

// Whether the queue's quota rows name more than one ResourceFlavor: then
// its summaries name each flavor once, before its resources
// ("on-demand: cpu 170/384, memory 1Ti/2Ti; spot: cpu 51/384"), since a
// resource alone repeats once per flavor.
bool manyFlavors(const json& quotas) {
  std::string first;
  for (const auto& q : quotas) {
    const std::string flavor = q.value("flavor", "");
    if (first.empty()) first = flavor;
    if (flavor != first) return true;
  }
  return false;
}

// Joins quota or held rows, each written by `entry`, grouped by flavor as
// above when `withFlavor` (a held row whose quota no flavor covers says
// "-" and is written without one).
template <typename Entry>
std::string joinRows(const json& rows, bool withFlavor, const Entry& entry) {
  std::string out;
  std::string flavor = "\n";  // no flavor written yet
  for (const auto& row : rows) {
    const std::string f = row.value("flavor", "");
    if (!withFlavor || f == flavor) {
      if (!out.empty()) out += ", ";
    } else {
      if (!out.empty()) out += "; ";
      if (!f.empty() && f != "-") out += f + ": ";
      flavor = f;
    }
    out += entry(row);
  }
  return out;
}

std::string usageSummary(const json& quotas) {
  return joinRows(quotas, manyFlavors(quotas), [](const json& q) {
    return q.value("resource", "") + " " + q.value("reserved", "0") + "/" + q.value("nominal", "0");
  });
}

// What the queue's pods hold through ResourceClaims per flavor and resource
// (draHeld.quota), the uncharged part named when there is one:
// "nvidia.com/gpu 1 (1 uncharged)". Empty when nothing is held.
std::string heldSummary(const json& draHeld, bool withFlavor) {
  if (!draHeld.is_object() || !draHeld.contains("quota")) return "";
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : std::string("?"); };
  return joinRows(draHeld["quota"], withFlavor, [&](const json& h) {
    std::string out = h.value("resource", "") + " " + text(h["held"]);
    const json& uncharged = h["uncharged"];
    if (!uncharged.is_string() || uncharged.get<std::string>() != "0") {
      out += " (" + text(uncharged) + " uncharged)";
    }
    return out;
  });
}

// The records of one Workload object at or before `lastSeq`, read from
// object_index (ledger/format.h): one prefix scan per Workload, so a list of
// WorkloadHistories costs no replay. Null on a ledger whose index does not
// cover every record (`ledger-replay rebuild-projection` indexes it).
json workloadRecords(const Ledger& ledger, bool indexed, const std::string& ns,
                     const std::string& name, std::uint64_t lastSeq) {
  if (!indexed) return nullptr;
  // The group whose Workloads the projector indexes (ingest/projector.cpp).
  const std::string objectKey = "kueue.x-k8s.io/Workload/" + ns + "/" + name;
  std::vector<std::uint64_t> seqs;
  bool readable = true;
  const Status st = ledger.scanObjectIndex(
      format::objectRecordsPrefix(objectKey), [&](std::string_view key, std::string_view value) {
        std::string_view entryObject;
        std::uint64_t first = 0;
        if (!parseRecordEntryKey(key, &entryObject, &first) || entryObject != objectKey) return;
        if (!decodeRecordEntry(first, value, seqs)) readable = false;
      });
  if (!st.isOk() || !readable) {
    throw ApiError::internal("the object index entries of Workload " + ns + "/" + name +
                             " do not read (`ledger-replay verify`)");
  }
  return std::count_if(seqs.begin(), seqs.end(), [&](std::uint64_t s) { return s <= lastSeq; });
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
                     {"heldSummary", heldSummary(cq["draHeld"], manyFlavors(cq["quotas"]))},
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
    bool indexed = false;
    if (!ctx.ledger.objectIndexComplete(&indexed).isOk()) indexed = false;
    for (const auto& w : state["workloads"]) {
      json o = ownObject("WorkloadHistory", w.value("namespace", ""), w.value("name", ""), moment);
      o["status"] = {{"uid", w["uid"]},
                     {"clusterQueue", w["clusterQueue"]},
                     {"localQueue", w["localQueue"]},
                     {"state", w["state"]}};
      if (!wanted(o, ns, name)) continue;
      o["status"]["recordCount"] = workloadRecords(ctx.ledger, indexed, w.value("namespace", ""),
                                                   w.value("name", ""), moment.seq);
      if (!name.empty()) {
        QueryRequest q;
        q.command = "workload";
        q.target = w.value("namespace", "") + "/" + w.value("name", "");
        json history = parseAnswer(ctx.query(ctx.ledger, q));
        o["status"]["changes"] = std::move(history["changes"]);
      }
      out.push_back(std::move(o));
    }
  } else if (r.kind == "WorkloadWhy") {
    out = workloadWhyObjects(state, moment, ctx, ns, name);
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
    // A cut ledger holds the records after its cut (ledger-replay archive):
    // its range starts there, and names the archive holding the rest.
    const std::uint64_t last = ctx.ledger.lastSeq();
    const std::uint64_t firstSeq = last == 0 ? 0 : ctx.ledger.firstSeq();
    json out = {{"firstSeq", firstSeq}, {"lastSeq", last}};
    if (last > 0) {
      std::int64_t first = 0, lastNs = 0;
      if (!ctx.ledger.timeOf(firstSeq, &first).isOk() || !ctx.ledger.timeOf(last, &lastNs).isOk()) {
        throw ApiError::internal("cannot read the times of the ledger's first and last records");
      }
      out["firstTime"] = formatRfc3339(first);
      out["lastTime"] = formatRfc3339(lastNs);
    }
    if (const auto& cut = ctx.ledger.archiveCut()) {
      out["archive"] = {{"dir", cut->archiveDir},
                        {"lastSeq", cut->seq},
                        {"lastTime", formatRfc3339(cut->timeNs)}};
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
  } else if (what == "findings") {
    // When findings opened and closed (tools/query/findings_timeline.h),
    // for the web view's time lines: the charts' period and step.
    q.from = req.param("from").value_or("");
    q.to = req.param("to").value_or("");
    q.step = req.param("step").value_or("");
    if (q.from.empty() || q.to.empty() || q.step.empty()) {
      throw ApiError::badRequest(
          "findings needs from, to and step (RFC 3339 times, a step like 1h)");
    }
    // A fold of the whole period: computed once per ledger length, so that
    // reloads and pages open at once share it. Times relative to the clock
    // (now, -7d) move with it and are not kept.
    auto relative = [](const std::string& t) { return t == "now" || t.starts_with('-'); };
    if (!relative(q.from) && !relative(q.to)) {
      const std::string key = "findings:" + q.from + "|" + q.to + "|" + q.step + "|" +
                              std::to_string(ctx.ledger.lastSeq());
      return ApiResponse::ofJson(*ctx.answers.get(key, [&] { return ctx.query(ctx.ledger, q); }));
    }
  } else if (what == "workload") {
    q.target = req.param("target").value_or("");
    if (q.target.find('/') == std::string::npos) {
      throw ApiError::badRequest("workload needs target=NAMESPACE/NAME");
    }
  } else if (what == "why") {
    // ledger-query why NAMESPACE/NAME [--from] [--to]; a workload the ledger
    // never saw is the runner's 404.
    q.target = req.param("workload").value_or("");
    const auto slash = q.target.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == q.target.size()) {
      throw ApiError::badRequest("why needs workload=NAMESPACE/NAME, not '" +
                                 q.target.substr(0, 80) + "'");
    }
    q.from = req.param("from").value_or("");
    q.to = req.param("to").value_or("");
  } else {
    throw ApiError::notFound(
        "/ledger/v1/ serves range, state, usage, report, findings, workload and why");
  }
  return ApiResponse::ofJson(ctx.query(ctx.ledger, q));
}

}  // namespace ledger::serve
