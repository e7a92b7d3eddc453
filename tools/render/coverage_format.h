// What the ledger did not see, as every answer over a period prints it
// (docs/reference.md "Observation"): `coverage` in JSON, and one warning line
// per gap for tables and CSV.
//
// Pure functions; thread-safe; never throw but std::bad_alloc.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "replay/fold/observations.h"
#include "tools/render/json_text.h"

namespace ledger::render {

// {"observedFrom": TIME|null, "gaps": [{"from", "to", "resources", "reason"}]}
nlohmann::ordered_json coverageToJson(const replay::Coverage& coverage);
// The same, written into a document being written.
void writeCoverage(JsonText& j, const replay::Coverage& coverage);

// One line per gap, and one when the period starts before the ledger's
// first record; each ends in a newline, "" when there is nothing to say.
std::string coverageWarnings(const replay::Coverage& coverage, std::int64_t fromNs);

// The line for a moment inside a gap (state --at, serve): "" when the
// moment was observed.
std::string momentWarning(const replay::Coverage& coverage, std::int64_t atNs);

}  // namespace ledger::render
