// Printing the answer of `ledger-query admit` (replay/admission/
// admission_report.h) as the JSON shape that header states, keys in that
// order, and as a table for people.
//
// Pure functions (deterministic bytes); thread-safe; never throw except
// std::bad_alloc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "replay/admission/admission_report.h"

namespace ledger::render {

nlohmann::ordered_json admissionToJson(const replay::admission::AdmissionReport& report);
std::string admissionToTable(const replay::admission::AdmissionReport& report);

}  // namespace ledger::render
