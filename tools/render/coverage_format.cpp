#include "tools/render/coverage_format.h"

#include "schema/k8s/rfc3339.h"

namespace ledger::render {

namespace {

std::string gapText(const replay::ObservationGap& g) { return replay::describeGap(g); }

}  // namespace

nlohmann::ordered_json coverageToJson(const replay::Coverage& coverage) {
  nlohmann::ordered_json j;
  j["observedFrom"] = coverage.empty
                          ? nlohmann::ordered_json(nullptr)
                          : nlohmann::ordered_json(formatRfc3339(coverage.observedFromNs));
  j["gaps"] = nlohmann::ordered_json::array();
  for (const auto& g : coverage.gaps) {
    j["gaps"].push_back({{"from", formatRfc3339(g.fromNs)},
                         {"to", formatRfc3339(g.toNs)},
                         {"resources", g.resources},
                         {"reason", g.reason}});
  }
  return j;
}

void writeCoverage(JsonText& j, const replay::Coverage& coverage) {
  j.beginObject();
  j.key("observedFrom");
  if (coverage.empty) {
    j.null();
  } else {
    j.string(formatRfc3339(coverage.observedFromNs));
  }
  j.key("gaps");
  j.beginArray();
  for (const auto& g : coverage.gaps) {
    j.beginObject();
    j.key("from");
    j.string(formatRfc3339(g.fromNs));
    j.key("to");
    j.string(formatRfc3339(g.toNs));
    j.key("resources");
    j.beginArray();
    for (const auto& r : g.resources) j.string(r);
    j.endArray();
    j.key("reason");
    j.string(g.reason);
    j.endObject();
  }
  j.endArray();
  j.endObject();
}

std::string coverageWarnings(const replay::Coverage& coverage, std::int64_t fromNs) {
  std::string out;
  if (coverage.empty) return "warning: the ledger holds no record\n";
  if (fromNs < coverage.observedFromNs) {
    out += "warning: the ledger observed nothing before " + formatRfc3339(coverage.observedFromNs) +
           " (its first record)\n";
  }
  for (const auto& g : coverage.gaps) out += "warning: " + gapText(g) + "\n";
  return out;
}

std::string momentWarning(const replay::Coverage& coverage, std::int64_t atNs) {
  const replay::ObservationGap* g = replay::gapAt(coverage, atNs);
  return g == nullptr ? std::string() : "this moment is in a gap: " + gapText(*g);
}

}  // namespace ledger::render
