// A StateReport's numbers as Prometheus text exposition (format 0.0.4), for
// the --watch daemon's /metrics. Names and labels follow Kueue's own
// metrics (kueue_cluster_queue_resource_usage{cluster_queue,flavor,resource},
// kueue_cluster_queue_nominal_quota), so that dashboards can chart the
// ledger's recomputation beside Kueue's:
//
//   ledger_cluster_queue_reserved{cluster_queue,flavor,resource}       gauge
//   ledger_cluster_queue_admitted{cluster_queue,flavor,resource}       gauge
//   ledger_cluster_queue_nominal_quota{cluster_queue,flavor,resource}  gauge
//   ledger_cluster_queue_held{cluster_queue,flavor,resource}           gauge
//   ledger_cluster_queue_uncharged{cluster_queue,flavor,resource}      gauge
//   ledger_open_findings{type,cluster_queue}                           gauge
//   ledger_pool_devices{driver,pool}                                   gauge
//   ledger_pool_allocated_devices{driver,pool}                         gauge
//   ledger_pool_consumed{driver,pool,counter_set,counter}              gauge
//   ledger_pool_capacity{driver,pool,counter_set,counter}              gauge
//   ledger_state_seq                                                   gauge
//
// Values are in the resource's units (Kubernetes quantities as exact
// decimals: "500m" is 0.5, "1Gi" is 1073741824). A sum past the exact range
// (a QuantityOverflow finding) is NaN, never a wrong number.
//
// Held and uncharged (StateReport::held) have a series for each (ClusterQueue,
// flavor, resource) something is held in now; cluster_queue "-" is pods of
// no admitted Workload, flavor "-" where no single flavor charges it.
//
// Cardinality is bounded by the cluster's configuration, never by its
// workloads: no label names a workload, pod or claim. ledger_open_findings
// has a series for every type in kFindingTypes and every ClusterQueue (0
// when none is open), so that an alert on it sees 0 before the first
// finding; other types appear while open. A finding is counted under the
// ClusterQueue it names, or its Workload's ClusterQueue; findings about
// pools, devices and cohorts are counted under cluster_queue="".
//
// Pure functions; thread-safe; never throw except std::bad_alloc.
#pragma once

#include <array>
#include <string>

#include "replay/kueue/report.h"

namespace ledger::render {

// The audit's finding types an alert is expected to watch.
inline constexpr std::array<const char*, 8> kFindingTypes = {
    "UnchargedDRA",  "UnderchargedDRA",      "ChargeMismatch",        "ChargeDrift",
    "QuotaExceeded", "CounterOvercommitted", "DeviceDoubleAllocated", "StatusMismatch"};

std::string reportToMetrics(const replay::StateReport& report);

// The ClusterQueue a finding is counted under ("" for none).
std::string findingClusterQueue(const replay::StateReport& report, const replay::Finding& finding);

// A quantity as an exact decimal number ("1.5", "-0.001", "3").
std::string exactDecimal(const Quantity& q);

}  // namespace ledger::render
