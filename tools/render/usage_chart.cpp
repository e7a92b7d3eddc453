#include "tools/render/usage_chart.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>

#include "schema/k8s/rfc3339.h"

namespace ledger::render {

using namespace ledger::replay;

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

double ratio(const Quantity& a, const Quantity& b) {
  if (b.isZero()) return 0;
  return static_cast<double>(a.nanos()) / static_cast<double>(b.nanos());
}

// One pixel column of a series: its utilisation (percent of nominal quota)
// where the column starts and ends, and the lowest and highest in between.
struct Column {
  double first = 0, low = 0, high = 0, last = 0;
};

struct ColumnSeries {
  std::vector<Column> columns;
  double end = 0;  // where the period ends (steps at `to` included)
};

// A series drawn one pixel column at a time. A point per change would draw
// more than any screen shows (ten days of the 10M-record ledger made an 18 MB
// SVG), and the value at each point used to be looked up from the series'
// start, which made long periods quadratic. One pass over both step series
// (each in time order); the lowest and highest value of each column keep
// short spikes visible.
ColumnSeries columnsOf(const std::vector<StepPoint>& reserved,
                       const std::vector<StepPoint>& nominal, std::int64_t from, std::int64_t to,
                       int columns) {
  ColumnSeries out;
  out.columns.resize(static_cast<std::size_t>(columns));
  Quantity r, n;
  std::size_t ri = 0, ni = 0;
  auto advance = [&](std::int64_t t) {  // every step at or before t
    while (ri < reserved.size() && reserved[ri].timeNs <= t) r = reserved[ri++].value;
    while (ni < nominal.size() && nominal[ni].timeNs <= t) n = nominal[ni++].value;
    return 100 * ratio(r, n);
  };
  const Int128 span = static_cast<Int128>(to) - from;
  for (int c = 0; c < columns; ++c) {
    const auto start = static_cast<std::int64_t>(from + span * c / columns);
    const auto end = static_cast<std::int64_t>(from + span * (c + 1) / columns);
    Column& col = out.columns[static_cast<std::size_t>(c)];
    col.first = col.low = col.high = col.last = advance(start);
    for (;;) {
      std::int64_t next = end;
      if (ri < reserved.size()) next = std::min(next, reserved[ri].timeNs);
      if (ni < nominal.size()) next = std::min(next, nominal[ni].timeNs);
      if (next >= end) break;
      col.last = advance(next);
      col.low = std::min(col.low, col.last);
      col.high = std::max(col.high, col.last);
    }
  }
  out.end = advance(to);
  return out;
}

// The level of max(reserved, held) after each change of either: the top
// of the uncharged band, whose bottom is the reserved line.
std::vector<StepPoint> maxOf(const std::vector<StepPoint>& a, const std::vector<StepPoint>& b) {
  std::vector<StepPoint> out;
  Quantity va, vb;
  std::size_t ai = 0, bi = 0;
  while (ai < a.size() || bi < b.size()) {
    const std::int64_t t = bi == b.size() || (ai < a.size() && a[ai].timeNs <= b[bi].timeNs)
                               ? a[ai].timeNs
                               : b[bi].timeNs;
    while (ai < a.size() && a[ai].timeNs == t) va = a[ai++].value;
    while (bi < b.size() && b[bi].timeNs == t) vb = b[bi++].value;
    out.push_back({t, std::max(va, vb)});
  }
  return out;
}

using ChartPoints = std::vector<std::pair<double, double>>;  // (x, percent)

// A step line: each column's value held to the next column; a column with
// changes inside draws its range as a vertical stroke.
ChartPoints stepLine(const ColumnSeries& s, double plotW) {
  ChartPoints out;
  const auto& columns = s.columns;
  double previous = columns.empty() ? s.end : columns.front().first;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const Column& col = columns[c];
    const double px = kLeft + plotW * static_cast<double>(c) / static_cast<double>(columns.size());
    if (col.first != previous) out.emplace_back(px, previous);
    out.emplace_back(px, col.first);
    if (col.low != col.high) {
      out.emplace_back(px, col.high);
      out.emplace_back(px, col.low);
      out.emplace_back(px, col.last);
    }
    previous = col.last;
  }
  out.emplace_back(kLeft + plotW, previous);
  if (s.end != previous) out.emplace_back(kLeft + plotW, s.end);
  return out;
}

double highest(const ColumnSeries& s) {
  double out = s.end;
  for (const auto& c : s.columns) out = std::max(out, c.high);
  return out;
}

// One (ClusterQueue, resource): reserved, and for a resource pods held
// through ResourceClaims, held and max(reserved, held).
struct ChartSeries {
  std::pair<std::string, std::string> key;
  ColumnSeries reserved;
  std::optional<ColumnSeries> held, top;
};

std::vector<ChartSeries> seriesOf(const UsagePeriod& period, int columnCount) {
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& [k, steps] : period.nominalSteps) keys.insert(k);
  for (const auto& [k, steps] : period.reservedSteps) keys.insert(k);
  for (const auto& [k, steps] : period.heldSteps) keys.insert(k);
  static const std::vector<StepPoint> kNone;
  std::vector<ChartSeries> out;
  for (const auto& k : keys) {
    auto n = period.nominalSteps.find(k);
    if (n == period.nominalSteps.end()) continue;  // no quota for it: nothing to compare with
    auto r = period.reservedSteps.find(k);
    const auto& reserved = r == period.reservedSteps.end() ? kNone : r->second;
    auto columns = [&](const std::vector<StepPoint>& steps) {
      return columnsOf(steps, n->second, period.fromNs, period.toNs, columnCount);
    };
    ChartSeries s{k, columns(reserved), std::nullopt, std::nullopt};
    if (auto h = period.heldSteps.find(k); h != period.heldSteps.end()) {
      s.held = columns(h->second);
      s.top = columns(maxOf(reserved, h->second));
    }
    out.push_back(std::move(s));
  }
  return out;
}

void writeHeader(std::ostringstream& svg, const UsagePeriod& period, double plotW, double plotH,
                 double maxPct, bool anyHeld) {
  auto y = [&](double pct) { return kTop + plotH * (1 - pct / maxPct); };
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<title>Reserved" << (anyHeld ? " and held" : "") << " quota as a share of nominal quota, "
      << formatRfc3339(period.fromNs) << " to " << formatRfc3339(period.toNs) << "</title>\n";
  svg << "<rect x=\"0\" y=\"0\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" fill=\"white\"/>\n";
  svg << "<text x=\"" << kLeft << "\" y=\"22\" font-size=\"14\">Reserved"
      << (anyHeld ? " and held" : "") << " / nominal quota, "
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
}

// The legend's rows: as many as fit between the top and the bottom margin,
// less the two lines explaining held. With more series than rows, the ones
// that peak highest are named (in colour) and the rest share one row and
// one grey, so the legend never runs off the chart however many queues the
// fleet has.
struct LegendPlan {
  std::vector<std::size_t> order;  // series indexes, named ones first
  std::size_t named = 0;           // how many of `order` get a colour and a row
};

LegendPlan planLegend(const std::vector<ChartSeries>& series, bool anyHeld) {
  const auto rows = static_cast<std::size_t>((kHeight - kTop - kBottom - (anyHeld ? 40 : 0)) / 16);
  LegendPlan plan;
  for (std::size_t i = 0; i < series.size(); ++i) plan.order.push_back(i);
  if (series.size() <= rows) {
    plan.named = series.size();
    return plan;
  }
  auto peak = [&](std::size_t i) {
    return std::max(highest(series[i].reserved), series[i].top ? highest(*series[i].top) : 0.0);
  };
  std::stable_sort(plan.order.begin(), plan.order.end(),
                   [&](std::size_t a, std::size_t b) { return peak(a) > peak(b); });
  plan.named = rows - 1;
  return plan;
}

void writeLegend(std::ostringstream& svg, const std::vector<ChartSeries>& series,
                 const LegendPlan& plan, bool anyHeld) {
  const double lx = kWidth - kRight + 16;
  double ly = kTop;
  for (std::size_t rank = 0; rank < plan.named; ++rank) {
    const ChartSeries& s = series[plan.order[rank]];
    const char* color = kColors[rank % (sizeof kColors / sizeof kColors[0])];
    svg << "<rect x=\"" << lx << "\" y=\"" << num(ly) << "\" width=\"12\" height=\"3\" fill=\""
        << color << "\"/><text class=\"legend\" x=\"" << lx + 18 << "\" y=\"" << num(ly + 5)
        << "\">" << escape(s.key.first + " " + s.key.second) << "</text>\n";
    ly += 16;
  }
  if (const std::size_t others = plan.order.size() - plan.named; others > 0) {
    svg << "<rect x=\"" << lx << "\" y=\"" << num(ly)
        << "\" width=\"12\" height=\"3\" fill=\"#bbbbbb\"/><text class=\"legend-others\" x=\""
        << lx + 18 << "\" y=\"" << num(ly + 5) << "\" fill=\"#666\">" << others
        << " others (lower peaks)</text>\n";
    ly += 16;
  }
  if (anyHeld) {
    // What the dotted line and the band mean, under the series' names.
    ly += 8;
    svg << "<text class=\"held-legend\" x=\"" << lx << "\" y=\"" << num(ly + 5)
        << "\" fill=\"#666\">dotted: held via ResourceClaims</text>\n";
    svg << "<text x=\"" << lx << "\" y=\"" << num(ly + 21)
        << "\" fill=\"#666\">shaded: held above reserved</text>\n";
  }
}

}  // namespace

std::string renderUsageChart(const UsagePeriod& period) {
  const double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  const std::vector<ChartSeries> series = seriesOf(period, static_cast<int>(plotW));
  // The y axis reaches 100% or the highest utilisation seen, whichever is larger.
  double maxPct = 100;
  bool anyHeld = false;
  for (const auto& s : series) {
    maxPct = std::max(maxPct, highest(s.reserved));
    if (s.top) maxPct = std::max(maxPct, highest(*s.top));
    anyHeld = anyHeld || s.held.has_value();
  }
  auto y = [&](double pct) { return kTop + plotH * (1 - pct / maxPct); };
  auto text = [&](const ChartPoints& points) {
    std::string out;
    for (const auto& [px, pct] : points) out += num(px) + "," + num(y(pct)) + " ";
    return out;
  };
  std::ostringstream svg;
  writeHeader(svg, period, plotW, plotH, maxPct, anyHeld);
  const LegendPlan plan = planLegend(series, anyHeld);
  // The unnamed series first, so the named ones draw over them.
  for (std::size_t rank = plan.order.size(); rank-- > 0;) {
    const ChartSeries& s = series[plan.order[rank]];
    const bool named = rank < plan.named;
    const char* color = named ? kColors[rank % (sizeof kColors / sizeof kColors[0])] : "#bbbbbb";
    const std::string width = named ? "2" : "1";
    const std::string data = "data-cluster-queue=\"" + escape(s.key.first) + "\" data-resource=\"" +
                             escape(s.key.second) + "\"";
    const ChartPoints reserved = stepLine(s.reserved, plotW);
    if (s.held) {
      // Uncharged: the band from the reserved line up to max(reserved,
      // held), empty wherever held is not above reserved.
      ChartPoints band = stepLine(*s.top, plotW);
      band.insert(band.end(), reserved.rbegin(), reserved.rend());
      svg << "<polygon class=\"uncharged\" " << data << " fill=\"" << color
          << "\" fill-opacity=\"0.25\" stroke=\"none\" points=\"" << text(band) << "\"/>\n";
    }
    svg << "<polyline class=\"series\" " << data << " fill=\"none\" stroke=\"" << color
        << "\" stroke-width=\"" << width << "\" points=\"" << text(reserved) << "\"/>\n";
    if (s.held) {
      svg << "<polyline class=\"held\" " << data << " fill=\"none\" stroke=\"" << color
          << "\" stroke-width=\"" << width << "\" stroke-dasharray=\"2 3\" points=\""
          << text(stepLine(*s.held, plotW)) << "\"/>\n";
    }
  }
  writeLegend(svg, series, plan, anyHeld);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace ledger::render
