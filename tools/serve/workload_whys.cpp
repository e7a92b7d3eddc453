#include "tools/serve/workload_whys.h"

#include <algorithm>

#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"
#include "tools/serve/resource_catalog.h"
#include "tools/serve/table_columns.h"

namespace ledger::serve {

namespace {

using nlohmann::json;

std::int64_t timeOf(const json& text) {
  const auto t = text.is_string() ? tryParseRfc3339(text.get<std::string>()) : std::nullopt;
  if (!t) throw ApiError::internal("the why answer holds a time that does not parse");
  return *t;
}

// The why command's answer for ns/name up to the moment. A moment before
// the ledger's end asks up to its time; the end (and `now`) asks for all.
json whyAnswer(const std::string& ns, const std::string& name, const Moment& moment,
               ServeContext& ctx) {
  QueryRequest q;
  q.command = "why";
  q.target = ns + "/" + name;
  const bool atEnd = moment.seq >= ctx.ledger.lastSeq();
  if (!atEnd) q.to = formatRfc3339(moment.timeNs);
  auto compute = [&] { return ctx.query(ctx.ledger, q); };
  const std::string text =
      atEnd ? compute()
            : *ctx.answers.get("why:" + std::to_string(moment.seq) + ":" +
                                   std::to_string(moment.timeNs) + ":" + q.target,
                               compute);
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) throw ApiError::internal("the why question answered with malformed JSON");
  return j;
}

}  // namespace

json workloadWhyObject(const std::string& ns, const std::string& name, const json& why,
                       const Moment& moment) {
  if (!why.contains("intervals") || !why["intervals"].is_array() || !why.contains("evictions") ||
      !why["evictions"].is_array()) {
    throw ApiError::internal("the why answer of " + ns + "/" + name + " has no intervals");
  }
  const json& intervals = why["intervals"];
  std::int64_t waitedNs = 0;
  for (const auto& i : intervals) {
    if (i.value("state", "") != "Pending") continue;
    const std::int64_t to = i["to"].is_null() ? moment.timeNs : timeOf(i["to"]);
    waitedNs += std::max<std::int64_t>(0, to - timeOf(i["from"]));
  }
  std::int64_t unexpected = 0;
  for (const auto& e : why["evictions"]) {
    if (e.contains("conforms") && e["conforms"] == false) ++unexpected;
  }
  json metadata = {
      {"name", name}, {"namespace", ns}, {"resourceVersion", std::to_string(moment.seq)}};
  if (!intervals.empty()) metadata["creationTimestamp"] = intervals.front()["from"];
  return {{"apiVersion", std::string(kLedgerGroup) + "/" + std::string(kLedgerVersion)},
          {"kind", "WorkloadWhy"},
          {"metadata", std::move(metadata)},
          {"status",
           {{"state", intervals.empty() ? json(nullptr) : intervals.back()["state"]},
            {"waitedSeconds", waitedNs / 1'000'000'000},
            {"waited", humanDuration(waitedNs)},
            {"evictionCount", why["evictions"].size()},
            {"unexpectedCount", unexpected},
            {"intervals", intervals},
            {"evictions", why["evictions"]},
            {"findings", why.contains("findings") ? why["findings"] : json::array()}}}};
}

std::vector<json> workloadWhyObjects(const json& state, const Moment& moment, ServeContext& ctx,
                                     std::string_view ns, std::string_view name) {
  std::vector<json> out;
  for (const auto& w : state["workloads"]) {
    const std::string wns = w.value("namespace", ""), wname = w.value("name", "");
    if ((!ns.empty() && wns != ns) || (!name.empty() && wname != name)) continue;
    out.push_back(workloadWhyObject(wns, wname, whyAnswer(wns, wname, moment, ctx), moment));
  }
  return out;
}

}  // namespace ledger::serve
