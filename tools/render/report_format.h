// Printing a StateReport: the contract's JSON (fields in contract order,
// arrays already sorted) and a kubectl-like table for people. The JSON is
// written as text (json_text.h); the nlohmann values below are that text
// parsed, for callers that add to it or look into it.
//
// Rendering is the programs' job (tools/), apart from the rules that compute
// the report (replay/kueue). Pure functions; thread-safe; never throw except std::bad_alloc.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "replay/kueue/integral.h"
#include "replay/kueue/report.h"
#include "replay/kueue/usage_report.h"

namespace ledger::render {

using replay::ClusterQueueReport;
using replay::StateReport;

// What reportToJson(report).dump(2) prints, written directly: a report of
// thousands of objects without building its tree of JSON nodes first.
std::string reportJsonText(const StateReport& report);
nlohmann::ordered_json reportToJson(const StateReport& report);
nlohmann::ordered_json clusterQueueToJson(const ClusterQueueReport& q);
nlohmann::ordered_json atToJson(std::uint64_t seq, std::int64_t timeNs);
// The state report's table. By default one line per pool (the number of its
// counters and of those used up); `wide` lists every counter, consumed of
// capacity (`--wide`).
struct TableOptions {
  bool wide = false;
  bool findingsOnly = false;  // the moment and the findings, no other table
};
std::string reportToTable(const StateReport& report, const TableOptions& options = {});
std::string poolsToTable(const std::vector<replay::PoolReport>& pools,
                         const TableOptions& options = {});
std::string clusterQueuesToTable(const std::vector<ClusterQueueReport>& queues);

// A simple aligned text table (kubectl get style: upper-case headers).
// A `report` row's integrals, as `ledger-query report -o json` prints them
// after the row's names: reservedResourceSeconds, reservedResourceHours,
// quotaResourceSeconds and utilisation (both null without a quota).
void putUsageIntegrals(nlohmann::ordered_json& row, const replay::Integral& reserved,
                       const std::optional<replay::Integral>& quota);
// A row of a resource some pod held through a ResourceClaim in the period
// gets, after those, heldResourceSeconds, heldResourceHours,
// unchargedResourceSeconds and unchargedResourceHours.
void putHeldIntegrals(nlohmann::ordered_json& row, const replay::UsageRow& r);
// "12.500000 h" or "3.000000 GiB-h": an integral as the table prints it.
std::string hoursText(const replay::Integral& integral, const std::string& resource);
// The row's utilisation, as the CSV and table print it ("" without a quota).
std::string utilisationText(const replay::Integral& reserved,
                            const std::optional<replay::Integral>& quota);

std::string renderTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows);

}  // namespace ledger::render
