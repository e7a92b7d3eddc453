#include "report.h"

#include <kj/exception.h>

#include <algorithm>
#include <future>

#include "audit.h"
#include "replayer.h"

namespace ledger::replay {

namespace {

// The report over `state`, given the digest being computed beside it.
StateReport buildReportWith(const ClusterState& state, std::future<std::string>& digest) {
  AuditContext ctx(state);
  StateReport report;
  report.seq = state.seq();
  report.timeNs = state.timeNs();
  std::vector<WorkloadAudit> workloads = auditWorkloads(ctx);
  report.clusterQueues = auditQueues(ctx, workloads);
  report.pools = auditPools(ctx, workloads, report.clusterQueues);
  for (auto& w : workloads) report.workloads.push_back(std::move(w.report));
  for (const auto& [key, obj] : state.objects(ObjectKind::kClusterQueue)) {
    for (auto p : obj->projection().getProblems()) {
      ctx.finding("MalformedObject", objectRef("ClusterQueue", "", obj->name()), p.cStr());
    }
  }
  report.findings = std::move(ctx.findings);
  report.digest = digest.get();
  // Findings in a stable order: type, object, message.
  std::sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.type, a.object, a.message) < std::tie(b.type, b.object, b.message);
  });
  report.findings.erase(std::unique(report.findings.begin(), report.findings.end()),
                        report.findings.end());
  return report;
}

}  // namespace

StateReport buildReport(const ClusterState& state) {
  // The digest copies and hashes every live object - a quarter of a report's
  // time at two thousand objects - and nothing else here needs it: it runs
  // on another core meanwhile (ClusterState::digest may run beside readers).
  // A kj::Exception must not leave the digest's thread (replayer.h,
  // damagedObject).
  auto digest = std::async(std::launch::async, [&state] {
    try {
      return toHex(state.digest());
    } catch (const kj::Exception& e) {
      throw damagedObject(e);
    }
  });
  try {
    return buildReportWith(state, digest);
  } catch (const kj::Exception& e) {
    throw damagedObject(e);
  }
}

}  // namespace ledger::replay
