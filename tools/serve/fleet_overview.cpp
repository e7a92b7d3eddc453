#include "tools/serve/fleet_overview.h"

#include <map>

#include "schema/k8s/quantity.h"
#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"

namespace ledger::serve {

using json = nlohmann::json;

namespace {

// A sum of quantities; unset once one of them is null (past the exact range).
struct Sum {
  std::optional<Quantity> value = Quantity();
  void add(const json& q) {
    if (!value) return;
    if (!q.is_string()) {
      value.reset();
      return;
    }
    *value += Quantity::parse(q.get<std::string>());
  }
  json text() const { return value ? json(value->toString()) : json(nullptr); }
};

struct ResourceSums {
  Sum nominal, reserved, held;
};

json share(const Sum& part, const Sum& whole) {
  if (!part.value || !whole.value || whole.value->nanos() <= 0) return nullptr;
  return static_cast<double>(part.value->nanos()) / static_cast<double>(whole.value->nanos());
}

}  // namespace

json summarizeState(const json& state) {
  std::map<std::string, int> findings;
  for (const auto& f : state.value("findings", json::array())) ++findings[f.value("type", "")];
  std::map<std::string, ResourceSums> sums;
  long long pending = 0;
  const json queues = state.value("clusterQueues", json::array());
  for (const auto& cq : queues) {
    if (cq.contains("workloads")) pending += cq["workloads"].value("pending", 0LL);
    for (const auto& q : cq.value("quotas", json::array())) {
      ResourceSums& s = sums[q.value("resource", "")];
      s.nominal.add(q.value("nominal", json(nullptr)));
      s.reserved.add(q.value("reserved", json(nullptr)));
    }
    if (!cq.contains("draHeld")) continue;
    for (const auto& h : cq["draHeld"].value("quota", json::array())) {
      sums[h.value("resource", "")].held.add(h.value("held", json(nullptr)));
    }
  }
  json out;
  out["findings"] = findings;
  out["pending"] = pending;
  out["clusterQueues"] = queues.size();
  out["resources"] = json::array();
  for (const auto& [resource, s] : sums) {
    out["resources"].push_back({{"resource", resource},
                                {"nominal", s.nominal.text()},
                                {"reserved", s.reserved.text()},
                                {"held", s.held.text()},
                                {"reservedShare", share(s.reserved, s.nominal)},
                                {"heldShare", share(s.held, s.nominal)}});
  }
  return out;
}

json clusterRow(const std::string& cluster, ServeContext& ctx, std::optional<bool> isSigned) {
  const std::uint64_t last = ctx.ledger.lastSeq();
  json row = {
      {"cluster", cluster}, {"lastSeq", last}, {"lastTime", nullptr}, {"behindSeconds", nullptr}};
  if (isSigned) row["signed"] = *isSigned;
  (ctx.proof != nullptr ? *ctx.proof : ProofState{}).addTo(row);
  json summary = summarizeState(json::object());
  if (last > 0) {
    std::int64_t lastNs = 0;
    if (!ctx.ledger.timeOf(last, &lastNs).isOk()) {
      throw ApiError::internal("cannot read the time of cluster " + cluster + "'s last record");
    }
    row["lastTime"] = formatRfc3339(lastNs);
    row["behindSeconds"] = (ctx.nowNs - lastNs) / 1'000'000'000;
    // A record's state never changes: the summary is kept per ledger length.
    const auto kept = ctx.answers.get("fleet-summary:" + std::to_string(last), [&] {
      QueryRequest q;
      q.command = "state";
      q.seq = last;
      return summarizeState(json::parse(ctx.query(ctx.ledger, q))).dump();
    });
    summary = json::parse(*kept);
  }
  for (auto& [k, v] : summary.items()) row[k] = v;
  return row;
}

}  // namespace ledger::serve
