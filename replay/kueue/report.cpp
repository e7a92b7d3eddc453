#include "replay/kueue/report.h"

#include <kj/exception.h>

#include <algorithm>
#include <future>

#include "replay/fold/replayer.h"
#include "replay/kueue/audit.h"

namespace ledger::replay {

namespace {

// The mapping in effect, and the configurations Kueue does not read: a
// ConfigMap other than the configured one (--kueue-config), or a Kueue CR
// not named `cluster`. Their mappings never apply, whatever their keys say,
// so a tenant cannot steer the audit; each is named, so a misconfigured
// source is not silently ignored either.
void auditConfig(AuditContext& ctx, StateReport& report) {
  const auto& epochs = ctx.state.chargeHistory().epochs();
  if (!epochs.empty()) {
    const ConfigEpoch& e = epochs.back();
    ConfigReport c;
    c.mappingSource = e.versionSeq == 0 ? std::string() : describeConfigSource(e.sourceKey);
    c.changedAtSeq = e.versionSeq;
    c.changedAtNs = e.versionNs;
    c.effectiveAtSeq = e.fromSeq;
    c.effectiveAtNs = e.fromNs;
    c.controllerRestart = e.controllerRestart;
    report.config = std::move(c);
  }
  for (const auto& [key, obj] : ctx.state.objects(ObjectKind::kDraConfig)) {
    if (!obj->projection().getBody().getDraConfig().getIgnored()) continue;
    const std::string source = describeConfigSource(key);
    ctx.finding("IgnoredConfig", source,
                source.rfind("ConfigMap", 0) == 0
                    ? "carries a Kueue configuration (controller_manager_config.yaml) but is not "
                      "the ConfigMap Kueue reads (--kueue-config); its deviceClassMappings are "
                      "ignored"
                    : "is not the Kueue CR the operator reads (named `cluster`); its "
                      "deviceClassMappings are ignored");
  }
}

// The report over `state`, given the digest being computed beside it (none:
// no digest).
StateReport buildReportWith(const ClusterState& state, std::future<std::string>* digest) {
  AuditContext ctx(state);
  StateReport report;
  report.seq = state.seq();
  report.timeNs = state.timeNs();
  std::vector<WorkloadAudit> workloads = auditWorkloads(ctx);
  report.clusterQueues = auditQueues(ctx, workloads);
  report.pools = auditPools(ctx, workloads, report.clusterQueues);
  report.held = auditHeld(ctx, workloads);
  for (auto& q : report.clusterQueues) {
    for (const auto& h : report.held) {
      if (h.clusterQueue == q.name) q.held.push_back(h);
    }
  }
  auditConfig(ctx, report);
  for (auto& w : workloads) report.workloads.push_back(std::move(w.report));
  for (const auto& [key, obj] : state.objects(ObjectKind::kClusterQueue)) {
    for (auto p : obj->projection().getProblems()) {
      ctx.finding("MalformedObject", objectRef("ClusterQueue", "", obj->name()), p.cStr());
    }
  }
  report.findings = std::move(ctx.findings);
  if (digest != nullptr) report.digest = digest->get();
  // Findings in a stable order: type, object, message.
  std::sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.type, a.object, a.message) < std::tie(b.type, b.object, b.message);
  });
  report.findings.erase(std::unique(report.findings.begin(), report.findings.end()),
                        report.findings.end());
  return report;
}

}  // namespace

StateReport buildReport(const ClusterState& state, const ReportOptions& options) {
  // The digest copies and hashes every live object - a quarter of a report's
  // time at two thousand objects - and nothing else here needs it: it runs
  // on another core meanwhile (ClusterState::digest may run beside readers).
  // A kj::Exception must not leave the digest's thread (replayer.h,
  // damagedObject).
  std::future<std::string> digest;
  if (options.digest) {
    digest = std::async(std::launch::async, [&state] {
      try {
        return toHex(state.digest());
      } catch (const kj::Exception& e) {
        throw damagedObject(e);
      }
    });
  }
  try {
    return buildReportWith(state, options.digest ? &digest : nullptr);
  } catch (const kj::Exception& e) {
    throw damagedObject(e);
  }
}

}  // namespace ledger::replay
