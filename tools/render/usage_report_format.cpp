#include "tools/render/usage_report_format.h"

#include <array>
#include <sstream>

#include "tools/render/report_format.h"

namespace ledger::render {

namespace {

using replay::Integral;
using replay::UsageRow;

struct NumberColumn {
  const char* header;
  std::string (*cell)(const UsageRow&);
};

// Byte resources in GiB-hours, the rest in resource-hours, as people read
// them; the exact resource-seconds stay beside them in JSON and CSV.
bool inGiB(const UsageRow& r) { return replay::isByteResource(r.resource); }
const char* unitOf(const UsageRow& r) { return inGiB(r) ? "GiB-h" : "h"; }
std::string unitHours(const Integral& i, const UsageRow& r) {
  return i.hours(inGiB(r) ? Int128(1) << 30 : Int128(1));
}
std::string quotaSeconds(const UsageRow& r) { return r.quota ? r.quota->seconds() : ""; }
std::string utilisationOf(const UsageRow& r) { return utilisationText(r.reserved, r.quota); }
// Held and uncharged in the table's unit (with it after `sep` when given
// one), on rows of a resource some pod held through a claim: "-" in the
// table, empty in CSV otherwise.
std::string heldCell(const Integral& i, const UsageRow& r, const char* sep) {
  if (!r.dra) return *sep != '\0' ? "-" : "";
  return *sep != '\0' ? unitHours(i, r) + sep + unitOf(r) : unitHours(i, r);
}

// What the table prints after a row's key cells.
constexpr std::array<NumberColumn, 6> kTableColumns = {{
    {"RESOURCE", [](const UsageRow& r) { return r.resource; }},
    {"RESERVED", [](const UsageRow& r) { return unitHours(r.reserved, r) + " " + unitOf(r); }},
    {"QUOTA",
     [](const UsageRow& r) {
       return r.quota ? unitHours(*r.quota, r) + " " + unitOf(r) : std::string("-");
     }},
    {"UTILISATION",
     [](const UsageRow& r) {
       const std::string u = utilisationOf(r);
       return u.empty() ? std::string("-") : u;
     }},
    {"HELD", [](const UsageRow& r) { return heldCell(r.held, r, " "); }},
    {"UNCHARGED", [](const UsageRow& r) { return heldCell(r.uncharged, r, " "); }},
}};

// What CSV prints after a row's key cells: the exact integrals, then the
// table's numbers without their unit (`unit` says it; empty without quota).
constexpr std::array<NumberColumn, 12> kCsvColumns = {{
    {"resource", [](const UsageRow& r) { return r.resource; }},
    {"reserved_resource_seconds", [](const UsageRow& r) { return r.reserved.seconds(); }},
    {"reserved_resource_hours", [](const UsageRow& r) { return r.reserved.hours(); }},
    {"quota_resource_seconds", quotaSeconds},
    {"utilisation", utilisationOf},
    {"unit", [](const UsageRow& r) { return std::string(unitOf(r)); }},
    {"reserved", [](const UsageRow& r) { return unitHours(r.reserved, r); }},
    {"quota", [](const UsageRow& r) { return r.quota ? unitHours(*r.quota, r) : std::string(); }},
    {"held_resource_seconds",
     [](const UsageRow& r) { return r.dra ? r.held.seconds() : std::string(); }},
    {"uncharged_resource_seconds",
     [](const UsageRow& r) { return r.dra ? r.uncharged.seconds() : std::string(); }},
    {"held", [](const UsageRow& r) { return heldCell(r.held, r, ""); }},
    {"uncharged", [](const UsageRow& r) { return heldCell(r.uncharged, r, ""); }},
}};

// The total rows as lines: `label` in the first key cell, the rest empty.
std::vector<ReportLine> totalLines(const std::vector<UsageRow>& totals, std::size_t keyCount,
                                   const std::string& label) {
  std::vector<ReportLine> out;
  for (const UsageRow& t : totals) {
    std::vector<std::string> keys(keyCount);
    if (!keys.empty()) keys[0] = label;
    out.push_back({std::move(keys), &t});
  }
  return out;
}

}  // namespace

std::vector<KeyColumn> keyColumns(const replay::Grouping& by) {
  std::vector<KeyColumn> out;
  if (by.dimensions.size() == 1) {
    out.push_back({"GROUP", "group", "group", std::string(dimensionField(by.dimensions[0]))});
    return out;
  }
  for (replay::GroupBy d : by.dimensions) {
    out.push_back({std::string(dimensionHeader(d)), std::string(dimensionColumn(d)),
                   std::string(dimensionField(d)), ""});
  }
  return out;
}

std::vector<ReportLine> reportLines(const std::vector<UsageRow>& rows) {
  std::vector<ReportLine> out;
  out.reserve(rows.size());
  for (const UsageRow& r : rows) out.push_back({r.groupValues, &r});
  return out;
}

nlohmann::ordered_json reportRowJson(const std::vector<KeyColumn>& keys, const ReportLine& line) {
  nlohmann::ordered_json row = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < keys.size() && i < line.keys.size(); ++i) {
    row[keys[i].field] = line.keys[i];
    if (!keys[i].alsoField.empty()) row[keys[i].alsoField] = line.keys[i];
  }
  row["resource"] = line.row->resource;
  putUsageIntegrals(row, line.row->reserved, line.row->quota);
  putHeldIntegrals(row, *line.row);
  return row;
}

nlohmann::ordered_json totalsJson(const std::vector<UsageRow>& totals) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const UsageRow& t : totals) out.push_back(reportRowJson({}, {{}, &t}));
  return out;
}

std::string reportCsv(const std::vector<KeyColumn>& keys, const std::vector<ReportLine>& lines,
                      const std::vector<UsageRow>& totals) {
  std::ostringstream out;
  auto cells = [&](const std::vector<std::string>& first, auto&& rest) {
    std::size_t n = 0;
    for (const std::string& c : first) out << (n++ ? "," : "") << c;
    for (const NumberColumn& c : kCsvColumns) out << (n++ ? "," : "") << rest(c);
    out << "\n";
  };
  std::vector<std::string> header;
  for (const KeyColumn& k : keys) header.push_back(k.csv);
  cells(header, [](const NumberColumn& c) { return std::string(c.header); });
  auto print = [&](const ReportLine& line) {
    cells(line.keys, [&](const NumberColumn& c) { return c.cell(*line.row); });
  };
  for (const ReportLine& line : lines) print(line);
  for (const ReportLine& line : totalLines(totals, keys.size(), "total")) print(line);
  return out.str();
}

std::string reportTable(const std::vector<KeyColumn>& keys, const std::vector<ReportLine>& lines,
                        const std::vector<UsageRow>& totals) {
  std::vector<std::string> header;
  for (const KeyColumn& k : keys) header.push_back(k.header);
  for (const NumberColumn& c : kTableColumns) header.emplace_back(c.header);
  std::vector<std::vector<std::string>> rows;
  auto add = [&](const ReportLine& line) {
    std::vector<std::string> cells = line.keys;
    for (const NumberColumn& c : kTableColumns) cells.push_back(c.cell(*line.row));
    rows.push_back(std::move(cells));
  };
  for (const ReportLine& line : lines) add(line);
  for (const ReportLine& line : totalLines(totals, keys.size(), "TOTAL")) add(line);
  return renderTable(header, rows);
}

}  // namespace ledger::render
