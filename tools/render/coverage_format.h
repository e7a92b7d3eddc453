// What the ledger did not see, as every answer over a period prints it
// (docs/reference.md "Observation"): `coverage` in JSON, and one warning line
// per gap for tables and CSV; and a period that runs past the ledger's last
// record, which says so in one line.
//
// Pure functions; thread-safe; never throw but std::bad_alloc.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
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

// Past the ledger's last record a period's levels are those the last
// record left, which no later record confirms (an ingester stopped looks
// the same as a quiet cluster): "note: the ledger's last record is at T;
// the period runs 19d 4h 5m past it\n", or "" when the period ends at or
// before it, or the ledger holds no record.
std::string afterLastRecordNote(std::optional<std::int64_t> lastRecordNs, std::int64_t toNs);
// "lastRecordAt": TIME (null without records), and "afterLastRecord": the
// note's sentence (no "note: ", no newline) when there is one.
void putLastRecord(nlohmann::ordered_json& j, std::optional<std::int64_t> lastRecordNs,
                   std::int64_t toNs);
void writeLastRecord(JsonText& j, std::optional<std::int64_t> lastRecordNs, std::int64_t toNs);

// A duration for people, largest units first, zeros left out, to the
// second: "19d 4h 5m 6s"; "0s" below a second.
std::string durationText(std::int64_t ns);

}  // namespace ledger::render
