// Prometheus' text exposition format, the part every /metrics page of the
// programs shares: a label value as the format quotes it. The daemon's
// health server (ingest/kube/metrics.h) and `ledger-query serve`'s report
// metrics (tools/render/report_metrics.h) both write label values that
// come from the cluster (ClusterQueue, flavor, resource names), so both
// escape them here, the one way the format defines.
//
// Functions only; thread-safe; no errors.
#pragma once

#include <string>
#include <string_view>

namespace ledger::net {

// `value` for use between a label's quotes: backslash, double quote and
// newline escaped as `\\`, `\"` and `\n`; every other byte as it is (the
// format's label values are UTF-8, which needs no escape).
std::string labelValue(std::string_view value);

}  // namespace ledger::net
