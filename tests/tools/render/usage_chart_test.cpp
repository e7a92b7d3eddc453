// The usage chart: one series per
// (ClusterQueue, resource), bounded in size however many changes the period
// holds, with short spikes kept.
#include <pugixml.hpp>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "replay/kueue/usage_report.h"
#include "tools/render/usage_chart.h"

using namespace ledger;
using namespace ledger::replay;

namespace {

constexpr std::int64_t kHour = 3600LL * 1000000000LL;

std::vector<std::pair<double, double>> pointsOf(const pugi::xml_node& line) {
  std::vector<std::pair<double, double>> out;
  std::string text = line.attribute("points").value();
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = text.find(',', at);
    const std::size_t space = text.find(' ', comma);
    out.emplace_back(std::stod(text.substr(at, comma - at)),
                     std::stod(text.substr(comma + 1, space - comma - 1)));
    at = space + 1;
  }
  return out;
}

pugi::xml_node onlySeries(pugi::xml_document& doc, const std::string& svg) {
  REQUIRE(doc.load_string(svg.c_str()));
  pugi::xml_node found;
  int count = 0;
  for (auto line : doc.child("svg").children("polyline")) {
    if (std::string(line.attribute("class").value()) != "series") continue;
    found = line;
    ++count;
  }
  REQUIRE(count == 1);
  return found;
}

}  // namespace

TEST_CASE("a chart of a million changes stays a few thousand points, spikes included",
          "[report][chart]") {
  UsagePeriod period;
  period.fromNs = 0;
  period.toNs = 1000 * kHour;
  const std::pair<std::string, std::string> key{"cq", "nvidia.com/gpu"};
  period.nominalSteps[key] = {{0, Quantity::fromInt(8)}};
  auto& steps = period.reservedSteps[key];
  // A million changes between 2 and 4 GPUs (25-50%), and one brief spike to
  // 12 GPUs (150%) for a second in the middle.
  for (std::int64_t i = 0; i < 1000000; ++i) {
    const std::int64_t t = i * (1000 * kHour / 1000000);
    steps.push_back({t, Quantity::fromInt(i % 2 == 0 ? 2 : 4)});
    if (i == 500000) steps.push_back({t + 1000000000, Quantity::fromInt(12)});
  }
  const std::string svg = render::renderUsageChart(period);
  CHECK(svg.size() < 200 * 1024);
  pugi::xml_document doc;
  const auto points = pointsOf(onlySeries(doc, svg));
  CHECK(points.size() < 5 * 1000);
  // The y axis reaches the spike, and the line touches it: 150% is the top.
  double top = 1e9, bottom = -1e9;
  for (const auto& [x, y] : points) {
    top = std::min(top, y);
    bottom = std::max(bottom, y);
  }
  CHECK(svg.find(">150.0%</text>") != std::string::npos);
  CHECK(top == Approx(40.0));  // kTop: the highest value drawn
  // ... and its lowest is 25% (2 of 8 GPUs): y = 40 + 330 * (1 - 25 / 150).
  CHECK(bottom == Approx(315.0));
}

TEST_CASE("a chart holds each level until the next change", "[report][chart]") {
  UsagePeriod period;
  period.fromNs = 0;
  period.toNs = 10 * kHour;
  const std::pair<std::string, std::string> key{"cq", "cpu"};
  period.nominalSteps[key] = {{0, Quantity::fromInt(10)}, {5 * kHour, Quantity::fromInt(20)}};
  period.reservedSteps[key] = {{0, Quantity::fromInt(5)}, {10 * kHour, Quantity::fromInt(0)}};
  pugi::xml_document doc;
  const auto points = pointsOf(onlySeries(doc, render::renderUsageChart(period)));
  REQUIRE(points.size() >= 4);
  // 50% for the first half, 25% after the quota doubles, 0% at the end:
  // y = 40 + 330 * (1 - pct / 100).
  std::vector<double> levels;
  for (const auto& [x, y] : points) {
    if (levels.empty() || levels.back() != y) levels.push_back(y);
  }
  CHECK(levels == std::vector<double>{205.0, 287.5, 370.0});
  CHECK(points.front().first == Approx(70.0));  // kLeft: the period's start
  CHECK(points.back().first == Approx(680.0));  // kLeft + plot width: its end
  // The quota doubles at the middle: the drop is drawn there.
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (points[i].second != points[i - 1].second && points[i].second == 287.5) {
      CHECK(points[i].first == Approx(375.0));
    }
  }
}

namespace {

pugi::xml_node onlyOf(pugi::xml_document& doc, const char* tag, const char* cls) {
  pugi::xml_node found;
  int count = 0;
  for (auto node : doc.child("svg").children(tag)) {
    if (std::string(node.attribute("class").value()) != cls) continue;
    found = node;
    ++count;
  }
  REQUIRE(count == 1);
  return found;
}

// The shoelace formula: the area a polygon's points enclose.
double areaOf(const std::vector<std::pair<double, double>>& points) {
  double twice = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& [x0, y0] = points[i];
    const auto& [x1, y1] = points[(i + 1) % points.size()];
    twice += x0 * y1 - x1 * y0;
  }
  return std::abs(twice) / 2;
}

}  // namespace

TEST_CASE("a chart draws held beside reserved and shades held above reserved",
          "[report][chart][held]") {
  UsagePeriod period;
  period.fromNs = 0;
  period.toNs = 10 * kHour;
  const std::pair<std::string, std::string> key{"team-b", "nvidia.com/gpu"};
  period.nominalSteps[key] = {{0, Quantity::fromInt(2)}};
  SECTION("held and not reserved: the band is all of held") {
    // One GPU held, none reserved, for the second half: 50% of quota.
    period.heldSteps[key] = {{5 * kHour, Quantity::fromInt(1)}};
    const std::string svg = render::renderUsageChart(period);
    pugi::xml_document doc;
    REQUIRE(doc.load_string(svg.c_str()));
    const auto held = onlyOf(doc, "polyline", "held");
    CHECK(std::string(held.attribute("data-cluster-queue").value()) == "team-b");
    CHECK(std::string(held.attribute("data-resource").value()) == "nvidia.com/gpu");
    std::vector<double> levels;
    for (const auto& [x, y] : pointsOf(held)) {
      if (levels.empty() || levels.back() != y) levels.push_back(y);
    }
    // 0%, then 50%: y = 40 + 330 * (1 - pct / 100).
    CHECK(levels == std::vector<double>{370.0, 205.0});
    // The reserved line stays at 0%.
    for (const auto& [x, y] : pointsOf(onlyOf(doc, "polyline", "series"))) CHECK(y == 370.0);
    // The band: half the plot's width (610 / 2) by 50% of its height (330 / 2).
    const auto band = pointsOf(onlyOf(doc, "polygon", "uncharged"));
    CHECK(areaOf(band) == Approx(305.0 * 165.0));
    CHECK(svg.find("shaded: held above reserved") != std::string::npos);
  }
  SECTION("held within reserved: nothing shaded") {
    period.reservedSteps[key] = {{0, Quantity::fromInt(2)}};
    period.heldSteps[key] = {{0, Quantity::fromInt(1)}, {5 * kHour, Quantity::fromInt(2)}};
    pugi::xml_document doc;
    REQUIRE(doc.load_string(render::renderUsageChart(period).c_str()));
    CHECK(areaOf(pointsOf(onlyOf(doc, "polygon", "uncharged"))) == Approx(0.0).margin(1e-6));
  }
  SECTION("a resource no pod held has no held line") {
    period.reservedSteps[key] = {{0, Quantity::fromInt(1)}};
    const std::string svg = render::renderUsageChart(period);
    CHECK(svg.find("class=\"held\"") == std::string::npos);
    CHECK(svg.find("class=\"uncharged\"") == std::string::npos);
  }
}

TEST_CASE("a chart of 64 series keeps its legend inside the chart, highest peaks named",
          "[report][chart]") {
  UsagePeriod period;
  period.fromNs = 0;
  period.toNs = 10 * kHour;
  // 16 ClusterQueues with 4 resources each; queue i peaks at i of 16 GPUs.
  for (int q = 0; q < 16; ++q) {
    for (const char* resource : {"cpu", "memory", "nvidia.com/gpu", "pods"}) {
      const std::pair<std::string, std::string> key{"cq-" + std::to_string(q), resource};
      period.nominalSteps[key] = {{0, Quantity::fromInt(16)}};
      const bool gpu = std::string(resource) == "nvidia.com/gpu";
      period.reservedSteps[key] = {{kHour, Quantity::fromInt(gpu ? q : 1)}};
    }
  }
  const std::string svg = render::renderUsageChart(period);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(svg.c_str()));
  const double height = doc.child("svg").attribute("height").as_double();
  int named = 0, others = -1, lines = 0;
  std::vector<std::string> names;
  for (auto text : doc.child("svg").children("text")) {
    const std::string cls = text.attribute("class").value();
    if (cls != "legend" && cls != "legend-others") continue;
    // Every legend row is drawn inside the chart (the old legend ran to
    // y = 1053 of a 420-pixel chart at 64 series).
    CHECK(text.attribute("y").as_double() < height);
    if (cls == "legend") {
      ++named;
      names.emplace_back(text.child_value());
    } else {
      others = std::stoi(text.child_value());
    }
  }
  for (auto line : doc.child("svg").children("polyline"))
    if (std::string(line.attribute("class").value()) == "series") ++lines;
  CHECK(lines == 64);
  REQUIRE(others > 0);
  CHECK(named + others == 64);
  // The busiest queues' GPUs come first.
  REQUIRE(!names.empty());
  CHECK(names.front() == "cq-15 nvidia.com/gpu");
  CHECK(names.at(1) == "cq-14 nvidia.com/gpu");
}
