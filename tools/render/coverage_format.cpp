#include "tools/render/coverage_format.h"

#include <algorithm>
#include <utility>

#include "schema/k8s/rfc3339.h"

namespace ledger::render {

namespace {

std::string gapText(const replay::ObservationGap& g) { return replay::describeGap(g); }

// The note's sentence, "" when the period does not pass the last record.
std::string afterLastRecord(std::optional<std::int64_t> lastRecordNs, std::int64_t toNs) {
  if (!lastRecordNs || toNs <= *lastRecordNs) return "";
  // Unsigned: the two may lie further apart than int64 holds.
  const std::uint64_t past =
      static_cast<std::uint64_t>(toNs) - static_cast<std::uint64_t>(*lastRecordNs);
  const auto pastNs = static_cast<std::int64_t>(
      std::min<std::uint64_t>(past, static_cast<std::uint64_t>(kMaxTimeNs)));
  return "the ledger's last record is at " + formatRfc3339(*lastRecordNs) + "; the period runs " +
         durationText(pastNs) + " past it";
}

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

std::string afterLastRecordNote(std::optional<std::int64_t> lastRecordNs, std::int64_t toNs) {
  const std::string sentence = afterLastRecord(lastRecordNs, toNs);
  return sentence.empty() ? "" : "note: " + sentence + "\n";
}

void putLastRecord(nlohmann::ordered_json& j, std::optional<std::int64_t> lastRecordNs,
                   std::int64_t toNs) {
  j["lastRecordAt"] = lastRecordNs ? nlohmann::ordered_json(formatRfc3339(*lastRecordNs))
                                   : nlohmann::ordered_json(nullptr);
  if (const std::string s = afterLastRecord(lastRecordNs, toNs); !s.empty()) {
    j["afterLastRecord"] = s;
  }
}

void writeLastRecord(JsonText& j, std::optional<std::int64_t> lastRecordNs, std::int64_t toNs) {
  j.key("lastRecordAt");
  if (lastRecordNs) {
    j.string(formatRfc3339(*lastRecordNs));
  } else {
    j.null();
  }
  if (const std::string s = afterLastRecord(lastRecordNs, toNs); !s.empty()) {
    j.key("afterLastRecord");
    j.string(s);
  }
}

std::string durationText(std::int64_t ns) {
  std::int64_t s = ns / 1000000000;
  if (s <= 0) return "0s";
  std::string out;
  for (const auto& [unit, name] :
       {std::pair<std::int64_t, const char*>{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}}) {
    if (s >= unit) {
      out += (out.empty() ? "" : " ") + std::to_string(s / unit) + name;
      s %= unit;
    }
  }
  return out;
}

}  // namespace ledger::render
