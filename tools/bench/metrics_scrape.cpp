#include "tools/bench/metrics_scrape.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <string_view>
#include <vector>

#include "schema/k8s/rfc3339.h"
#include "tools/cli.h"
#include "tools/live_state.h"

namespace ledger::bench {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string cell(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds);
  return text;
}

}  // namespace

void runMetricsScrape(const std::string& ledgerDir, int runs, std::ostream& out) {
  runs = std::max(runs, 1);
  auto ledger = cli::openForReading(ledgerDir);
  auto start = Clock::now();
  cli::LiveState live(*ledger);
  const double restore = secondsSince(start);
  start = Clock::now();
  const std::string first = live.metricsText(nowNs());
  const double firstScrape = secondsSince(start);
  std::vector<double> later;
  for (int i = 0; i < runs; ++i) {
    start = Clock::now();
    static_cast<void>(live.metricsText(nowNs()));
    later.push_back(secondsSince(start));
  }
  // A scrape after a commit builds the report again: the same work as a
  // first scrape, timed on live states restored anew.
  std::vector<double> changed;
  for (int i = 0; i < runs; ++i) {
    cli::LiveState again(*ledger);
    start = Clock::now();
    static_cast<void>(again.metricsText(nowNs()));
    changed.push_back(secondsSince(start));
  }
  // The queues the metrics name (a nominal quota series per quota row).
  constexpr std::string_view kNominal = "ledger_cluster_queue_nominal_quota{cluster_queue=\"";
  std::set<std::string> queueNames;
  for (std::size_t at = first.find(kNominal); at != std::string::npos;
       at = first.find(kNominal, at + 1)) {
    const std::size_t from = at + kNominal.size();
    queueNames.insert(first.substr(from, first.find('"', from) - from));
  }
  const std::size_t queues = queueNames.size();
  std::size_t series = 0;  // lines that are not # HELP or # TYPE
  for (std::size_t at = 0; at < first.size(); at = first.find('\n', at) + 1) {
    if (first[at] != '#') ++series;
    if (first.find('\n', at) == std::string::npos) break;
  }
  out << "| ClusterQueues | series | restore (s) | first scrape (s) | later scrape, "
         "same state (s) | scrape after a change (s) |\n"
      << "|---|---|---|---|---|---|\n"
      << "| " << queues << " | " << series << " | " << cell(restore) << " | " << cell(firstScrape)
      << " | " << cell(median(later)) << " | " << cell(median(changed)) << " |\n";
}

}  // namespace ledger::bench
