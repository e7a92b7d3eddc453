#include "usage_chart.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "rfc3339.h"

namespace ledger::replay {

namespace {

constexpr double kWidth = 900, kHeight = 420, kLeft = 70, kRight = 220, kTop = 40, kBottom = 50;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                               "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The value of a step series at time t (0 before its first step).
Quantity at(const std::vector<StepPoint>& steps, std::int64_t t) {
  Quantity v;
  for (const auto& p : steps) {
    if (p.timeNs > t) break;
    v = p.value;
  }
  return v;
}

double ratio(const Quantity& a, const Quantity& b) {
  if (b.isZero()) return 0;
  return static_cast<double>(a.nanos()) / static_cast<double>(b.nanos());
}

}  // namespace

std::string renderUsageChart(const UsagePeriod& period) {
  const double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  const double span = std::max<double>(1, static_cast<double>(period.toNs - period.fromNs));
  // The y axis reaches 100% or the highest utilisation seen, whichever is larger.
  double maxPct = 100;
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& [k, steps] : period.nominalSteps) keys.insert(k);
  for (const auto& [k, steps] : period.reservedSteps) keys.insert(k);
  for (const auto& k : keys) {
    auto r = period.reservedSteps.find(k);
    auto n = period.nominalSteps.find(k);
    if (r == period.reservedSteps.end() || n == period.nominalSteps.end()) continue;
    for (const auto& p : r->second)
      maxPct = std::max(maxPct, 100 * ratio(p.value, at(n->second, p.timeNs)));
  }
  auto x = [&](std::int64_t t) {
    return kLeft + plotW * static_cast<double>(t - period.fromNs) / span;
  };
  auto y = [&](double pct) { return kTop + plotH * (1 - pct / maxPct); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<title>Reserved quota as a share of nominal quota, " << formatRfc3339(period.fromNs)
      << " to " << formatRfc3339(period.toNs) << "</title>\n";
  svg << "<rect x=\"0\" y=\"0\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" fill=\"white\"/>\n";
  svg << "<text x=\"" << kLeft << "\" y=\"22\" font-size=\"14\">Reserved / nominal quota, "
      << escape(formatRfc3339(period.fromNs)) << " – " << escape(formatRfc3339(period.toNs))
      << "</text>\n";
  // Axes and grid.
  svg << "<g class=\"axes\" stroke=\"#333\">\n";
  svg << "<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\""
      << kTop + plotH << "\"/>\n";
  svg << "<line x1=\"" << kLeft << "\" y1=\"" << kTop + plotH << "\" x2=\"" << kLeft + plotW
      << "\" y2=\"" << kTop + plotH << "\"/>\n";
  svg << "</g>\n";
  for (int i = 0; i <= 4; ++i) {
    const double pct = maxPct * i / 4;
    svg << "<text x=\"" << kLeft - 8 << "\" y=\"" << num(y(pct) + 4) << "\" text-anchor=\"end\">"
        << num(pct) << "%</text>\n";
  }
  svg << "<line class=\"nominal\" x1=\"" << kLeft << "\" y1=\"" << num(y(100)) << "\" x2=\""
      << kLeft + plotW << "\" y2=\"" << num(y(100))
      << "\" stroke=\"#999\" stroke-dasharray=\"6 4\"/>\n";
  svg << "<text x=\"" << kLeft + plotW - 4 << "\" y=\"" << num(y(100) - 4)
      << "\" text-anchor=\"end\" fill=\"#666\">nominal quota</text>\n";
  svg << "<text x=\"" << kLeft << "\" y=\"" << kHeight - 16 << "\">"
      << escape(formatRfc3339(period.fromNs)) << "</text>\n";
  svg << "<text x=\"" << kLeft + plotW << "\" y=\"" << kHeight - 16 << "\" text-anchor=\"end\">"
      << escape(formatRfc3339(period.toNs)) << "</text>\n";
  std::size_t index = 0;
  for (const auto& k : keys) {
    auto n = period.nominalSteps.find(k);
    if (n == period.nominalSteps.end()) continue;  // no quota for it: nothing to compare with
    static const std::vector<StepPoint> kNone;
    auto r = period.reservedSteps.find(k);
    const auto& steps = r == period.reservedSteps.end() ? kNone : r->second;
    // Step line: hold each value until the next change.
    std::vector<std::int64_t> times{period.fromNs};
    for (const auto& p : steps) times.push_back(std::clamp(p.timeNs, period.fromNs, period.toNs));
    for (const auto& p : n->second)
      times.push_back(std::clamp(p.timeNs, period.fromNs, period.toNs));
    times.push_back(period.toNs);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    std::ostringstream points;
    double lastY = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      const double pct = 100 * ratio(at(steps, times[i]), at(n->second, times[i]));
      if (i > 0) points << num(x(times[i])) << "," << num(lastY) << " ";
      lastY = y(pct);
      points << num(x(times[i])) << "," << num(lastY) << " ";
    }
    const char* color = kColors[index % (sizeof kColors / sizeof kColors[0])];
    svg << "<polyline class=\"series\" data-cluster-queue=\"" << escape(k.first)
        << "\" data-resource=\"" << escape(k.second) << "\" fill=\"none\" stroke=\"" << color
        << "\" stroke-width=\"2\" points=\"" << points.str() << "\"/>\n";
    const double ly = kTop + 16.0 * static_cast<double>(index);
    svg << "<rect x=\"" << kWidth - kRight + 16 << "\" y=\"" << num(ly)
        << "\" width=\"12\" height=\"3\" fill=\"" << color << "\"/><text x=\""
        << kWidth - kRight + 34 << "\" y=\"" << num(ly + 5) << "\">"
        << escape(k.first + " " + k.second) << "</text>\n";
    ++index;
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace ledger::replay
