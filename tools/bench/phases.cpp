#include "tools/bench/phases.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ingest/ingester.h"
#include "ingest/stream_ingest.h"
#include "ingest/watch_event.h"
#include "ledger/format.h"
#include "ledger/ledger.h"
#include "replay/fold/checkpoints.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/report.h"
#include "replay/kueue/usage_rollups.h"
#include "tools/bench/bench_report.h"
#include "tools/generator/sim_rng.h"

namespace ledger::bench {

namespace {

std::unique_ptr<Ledger> openLedger(const std::string& dir, bool readOnly, bool create = false) {
  Ledger::Options o;
  o.createIfMissing = create;
  o.readOnly = readOnly;
  o.sync = false;
  std::unique_ptr<Ledger> ledger;
  if (Status st = Ledger::open(dir, o, &ledger); !st.isOk()) {
    throw std::runtime_error(st.toString());
  }
  return ledger;
}

// Drops the ledger's files from the page cache. Only clean pages go, which
// is all of them here: RocksDB syncs table files when it finishes them.
void dropPageCache(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // a file RocksDB just removed
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// Reads every family a point-in-time query reads, in full; returns the bytes.
std::uint64_t warmQueryFamilies(const Ledger& ledger) {
  std::uint64_t touched = 0;
  for (const char* family : {format::kProjectionFamily, format::kTimeIndexFamily,
                             format::kCheckpointsFamily, format::kCheckpointObjectsFamily}) {
    Status st = ledger.scanRaw(
        family, [&](std::string_view, std::string_view value) { touched += value.size(); });
    if (!st.isOk()) throw std::runtime_error(st.toString());
  }
  return touched;
}

}  // namespace

Metrics ingestPhase(const std::string& jsonlPath, const std::string& dir, std::size_t batch) {
  std::filesystem::remove_all(dir);
  auto ledger = openLedger(dir, false, true);
  ingest::IngestOptions io;
  io.batchRecords = batch;
  ingest::Ingester ingester(*ledger, io);
  std::ifstream in(jsonlPath, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + jsonlPath);
  const std::string source = "file:" + std::filesystem::absolute(jsonlPath).string();
  const double start = nowSeconds();
  const double cpuStart = cpuSeconds();
  // As ledger-ingest reads a file (tools/ledger_ingest.cpp).
  ingest::StreamOptions options;
  options.reader.dropManagedFields = true;  // the Ingester drops them anyway
  options.reader.storedJson = true;
  options.reader.projection = true;  // projected from the DOM, the value kept small
  const ingest::StreamTotals totals = ingest::ingestStream(in, source, ingester, options);
  ingester.flush();
  const double seconds = nowSeconds() - start;
  const double cpu = cpuSeconds() - cpuStart;
  return {{"values", static_cast<double>(totals.values)},
          {"cpuSeconds", cpu},
          {"recorded", static_cast<double>(ingester.stats().recorded)},
          {"rejected", static_cast<double>(totals.rejected)},
          {"bytes", static_cast<double>(totals.bytes)},
          {"seconds", seconds}};
}

Metrics settlePhase(const std::string& dir) {
  auto ledger = openLedger(dir, false);
  Metrics m;
  for (const auto& [family, bytes] : ledger->diskUsage()) {
    m["bytes." + family] = static_cast<double>(bytes);
  }
  // What checkpoints cost: themselves and the copies they hold.
  m["bytes.checkpoints"] += m["bytes.checkpoint_objects"];
  return m;
}

Metrics replayPhase(const std::string& dir, PageCache cache) {
  if (cache == PageCache::kCold) dropPageCache(dir);
  auto ledger = openLedger(dir, true);
  replay::Replayer replayer(*ledger);
  replay::FoldOptions fo;
  fo.useCheckpoints = false;
  double start = nowSeconds();
  const double cpuStart = cpuSeconds();
  replay::ClusterState state = replayer.foldTo(ledger->lastSeq(), fo);
  const double seconds = nowSeconds() - start;
  const double cpu = cpuSeconds() - cpuStart;
  const double rss = peakRssMb();
  start = nowSeconds();
  const replay::StateReport report = replay::buildReport(state);
  const double reportSeconds = nowSeconds() - start;
  return {{"records", static_cast<double>(state.seq())},
          {"seconds", seconds},
          {"cpuSeconds", cpu},
          {"liveObjects", static_cast<double>(state.liveObjects())},
          {"workloads", static_cast<double>(report.workloads.size())},
          {"findings", static_cast<double>(report.findings.size())},
          {"rssMb", rss},
          {"reportSeconds", reportSeconds}};
}

Metrics rawScanPhase(const std::string& dir) {
  auto ledger = openLedger(dir, true);
  std::uint64_t records = 0, bytes = 0, checksum = 0;
  const double start = nowSeconds();
  const double cpuStart = cpuSeconds();
  Status st =
      ledger->scanRaw(format::kProjectionFamily, [&](std::string_view key, std::string_view value) {
        ++records;
        bytes += key.size() + value.size();
        // Touch the value so the scan cannot skip reading it.
        for (std::size_t i = 0; i < value.size(); i += 64)
          checksum += static_cast<unsigned char>(value[i]);
      });
  const double seconds = nowSeconds() - start;
  const double cpu = cpuSeconds() - cpuStart;
  if (!st.isOk()) throw std::runtime_error(st.toString());
  return {{"records", static_cast<double>(records)},
          {"bytes", static_cast<double>(bytes)},
          {"seconds", seconds},
          {"cpuSeconds", cpu},
          {"checksum", static_cast<double>(checksum % 1000)}};
}

Metrics checkpointPhase(const std::string& dir) {
  Metrics m;
  {
    auto ledger = openLedger(dir, false);
    double start = nowSeconds();
    m["written"] =
        static_cast<double>(replay::writeCheckpoints(*ledger, replay::kDefaultCheckpointInterval));
    m["seconds"] = nowSeconds() - start;
    m["interval"] = static_cast<double>(replay::kDefaultCheckpointInterval);
    start = nowSeconds();
    m["rollupsWritten"] = static_cast<double>(replay::writeUsageRollups(*ledger));
    m["rollupSeconds"] = nowSeconds() - start;
  }
  // Reopened after the clean close flushed them: the table files hold
  // everything, so the families' sizes on disk are whole.
  auto ledger = openLedger(dir, true);
  for (const auto& [family, bytes] : ledger->diskUsage()) {
    m["bytes." + family] = static_cast<double>(bytes);
  }
  return m;
}

Metrics queryPhase(const std::string& dir, int queries, std::uint64_t seed, PageCache cache) {
  constexpr int kReportedQueries = 20;
  auto ledger = openLedger(dir, true);
  const double warmStart = nowSeconds();
  const std::uint64_t warmBytes = cache == PageCache::kWarm ? warmQueryFamilies(*ledger) : 0;
  const double warmSeconds = nowSeconds() - warmStart;
  replay::Replayer replayer(*ledger);
  std::int64_t first = 0;
  if (Status st = ledger->timeOf(1, &first); !st.isOk()) throw std::runtime_error(st.toString());
  const std::int64_t last = ledger->lastTimeNs();
  gen::SimRng rng(seed ^ 0x51ED2701ULL);
  std::vector<double> fold, report;
  for (int i = 0; i < queries; ++i) {
    const std::int64_t at =
        first + static_cast<std::int64_t>(
                    rng.below(static_cast<std::uint64_t>(std::max<std::int64_t>(1, last - first))));
    if (cache == PageCache::kCold) dropPageCache(dir);
    double start = nowSeconds();
    const std::uint64_t seq = replayer.seqAt(at);
    replay::ClusterState state = replayer.foldTo(seq == 0 ? 1 : seq);
    fold.push_back((nowSeconds() - start) * 1000);
    if (i >= kReportedQueries) continue;  // reports are slow and not what is compared
    start = nowSeconds();
    const replay::StateReport r = replay::buildReport(state);
    report.push_back((nowSeconds() - start) * 1000);
  }
  return {{"queries", static_cast<double>(queries)},    {"foldMedianMs", percentile(fold, 0.5)},
          {"foldP99Ms", percentile(fold, 0.99)},        {"reportMedianMs", percentile(report, 0.5)},
          {"reportP99Ms", percentile(report, 0.99)},    {"warmSeconds", warmSeconds},
          {"warmBytes", static_cast<double>(warmBytes)}};
}

}  // namespace ledger::bench
