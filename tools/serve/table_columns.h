// The Table form of a list (metav1.Table, what kubectl asks for with
// `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): the columns
// kubectl prints for each kind and each object's cells.
//
// Kueue's kinds get their CRDs' additionalPrinterColumns (config/components/
// crd/bases: ClusterQueue's Cohort is .spec.cohort in v1beta1 and
// .spec.cohortName in v1beta2); the ledger's own kinds their own; every
// Pods and ResourceClaims the columns Kubernetes' own printer gives them
// (core_printers.h), claims with two more under -o wide; every other kind
// NAME and AGE. AGE, and any date column, is the time from the
// object's creationTimestamp to the chosen moment, written as the API
// machinery writes durations (duration.HumanDuration: 45s, 3m20s, 5h, 3d4h).
//
// Functions only; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tools/serve/resource_catalog.h"

namespace ledger::serve {

// A cell computed from the whole object and the moment (core_printers.h).
using CellFunction = nlohmann::json (*)(const nlohmann::json& object, std::int64_t momentNs);

struct TableColumn {
  std::string name, type, format, description;
  int priority = 0;             // 1: only with -o wide
  std::string jsonPath;         // ".spec.queueName"; "" for the Name column (and a computed one)
  CellFunction cell = nullptr;  // when set, the cell instead of jsonPath's value
};

std::vector<TableColumn> tableColumns(const ApiResource& resource, std::string_view version);

// The annotation every watch event's object carries: the RFC 3339 time of
// the record the event replays (a synthetic ADDED event: of the record
// holding the version live at the moment). An object as recorded never
// holds it; lists and gets answer objects without it.
inline constexpr const char* kRecordedAtAnnotation = "quota-ledger.io/recorded-at";
// A watch's columns: the kind's, then "Recorded" (the annotation above), so
// `kubectl get -w` prints when each change was recorded.
std::vector<TableColumn> watchColumns(std::vector<TableColumn> columns);
nlohmann::json columnDefinitions(const std::vector<TableColumn>& columns);
nlohmann::json tableCells(const std::vector<TableColumn>& columns, const nlohmann::json& object,
                          std::int64_t momentNs);
// The value at a printer column's JSONPath: `.a.b`, `.a[0]`, and
// `.a[?(@.k=='v')].b` (the forms Kueue's columns use); null when absent.
nlohmann::json evalJsonPath(const nlohmann::json& object, std::string_view path);
std::string humanDuration(std::int64_t ns);

}  // namespace ledger::serve
