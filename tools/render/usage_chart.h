// An SVG chart of a period's usage against nominal quota: one line per
// (ClusterQueue, resource) showing reserved as a percentage of nominal quota
// (so cpu, memory and GPUs share one axis), with 100% marked as the quota.
// For a resource pods held through ResourceClaims (period.heldSteps), a
// dotted line of held in the same colour (polyline class "held") and, shaded
// (polygon class "uncharged"), the band where held is above reserved.
// Written with the project's own small writer; opens in any browser.
//
// Pure function; thread-safe; never throws except std::bad_alloc.
#pragma once

#include <string>

#include "replay/kueue/usage_report.h"

namespace ledger::render {

using replay::UsagePeriod;

std::string renderUsageChart(const UsagePeriod& period);

}  // namespace ledger::render
