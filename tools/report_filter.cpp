#include "tools/report_filter.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "tools/program.h"

namespace ledger::cli {

namespace {

template <typename T, typename Keep>
void keepIf(std::vector<T>& rows, Keep keep) {
  std::erase_if(rows, [&](const T& row) { return !keep(row); });
}

// "ns/name" -> "ns"; "" for a name without a namespace.
std::string_view namespaceOf(std::string_view qualified) {
  const auto slash = qualified.find('/');
  return slash == std::string_view::npos ? std::string_view() : qualified.substr(0, slash);
}

// A finding names its object "Kind namespace/name" or "Kind name"
// (replay/kueue/report.h).
bool findingKept(const replay::Finding& f, const ReportFilter& filter,
                 const std::set<std::string>& queues, const std::set<std::string>& workloads) {
  const auto space = f.object.find(' ');
  const std::string kind = f.object.substr(0, space);
  const std::string name = space == std::string::npos ? "" : f.object.substr(space + 1);
  if (kind == "ClusterQueue") return queues.count(name) > 0;
  if (kind == "Workload") return workloads.count(name) > 0;
  if (filter.clusterQueue) return false;  // a claim or a pod belongs to no queue by name
  return namespaceOf(name) == *filter.ns;
}

}  // namespace

void filterReport(replay::StateReport& report, const ReportFilter& filter) {
  if (filter.clusterQueue &&
      std::none_of(report.clusterQueues.begin(), report.clusterQueues.end(),
                   [&](const auto& q) { return q.name == *filter.clusterQueue; })) {
    throw UsageError("no ClusterQueue '" + *filter.clusterQueue + "' at that moment");
  }
  if (filter.clusterQueue || filter.ns) {
    auto workloadKept = [&](const replay::WorkloadReport& w) {
      return (!filter.clusterQueue || w.clusterQueue == *filter.clusterQueue) &&
             (!filter.ns || w.ns == *filter.ns);
    };
    keepIf(report.workloads, workloadKept);
    std::set<std::string> workloads, queues;
    for (const auto& w : report.workloads) {
      workloads.insert(w.ns + "/" + w.name);
      queues.insert(w.clusterQueue);
    }
    if (filter.clusterQueue) queues = {*filter.clusterQueue};
    keepIf(report.clusterQueues, [&](const auto& q) { return queues.count(q.name) > 0; });
    keepIf(report.held, [&](const auto& h) { return queues.count(h.clusterQueue) > 0; });
    for (auto& pool : report.pools) {
      keepIf(pool.allocations, [&](const replay::AllocationReport& a) {
        return filter.ns ? namespaceOf(a.claim) == *filter.ns &&
                               (!filter.clusterQueue || a.clusterQueue == *filter.clusterQueue)
                         : a.clusterQueue == *filter.clusterQueue;
      });
    }
    keepIf(report.pools, [](const auto& p) { return !p.allocations.empty(); });
    keepIf(report.findings,
           [&](const auto& f) { return findingKept(f, filter, queues, workloads); });
  }
  if (filter.findingsOnly) {
    report.clusterQueues.clear();
    report.workloads.clear();
    report.pools.clear();
    report.held.clear();
  }
}

}  // namespace ledger::cli
