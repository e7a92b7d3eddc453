#include "tools/bench/live_phase.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "ingest/ingester.h"
#include "ingest/stream_ingest.h"
#include "ledger/ledger.h"
#include "replay/fold/checkpoints.h"
#include "schema/k8s/rfc3339.h"
#include "tools/ledger_upkeep.h"
#include "tools/live_state.h"

namespace ledger::bench {

namespace {

// Lines of the stream (one event each): the points where RSS is read are
// fractions of it, known before the run.
std::uint64_t countLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::uint64_t n = 0;
  std::string line;
  while (std::getline(in, line)) n += line.empty() ? 0 : 1;
  return n;
}

}  // namespace

Metrics livePhase(const std::string& jsonlPath, const std::string& dir) {
  // The daemon's info lines (restored, ...) would land in the bench's table.
  spdlog::set_level(spdlog::level::warn);
  const std::uint64_t lines = countLines(jsonlPath);
  std::filesystem::remove_all(dir);
  Ledger::Options lo;
  lo.sync = false;
  lo.maxWalBytes = kLiveMaxTotalWalBytes;  // as the daemon opens it
  std::unique_ptr<Ledger> ledger;
  if (Status st = Ledger::open(dir, lo, &ledger); !st.isOk()) {
    throw std::runtime_error(st.toString());
  }
  cli::LiveState live(*ledger);
  cli::UpkeepOptions uo;
  uo.checkpointEvery = replay::kDefaultCheckpointInterval;
  uo.verifyEvery = std::chrono::hours(1);  // the daemon's default: once, at start
  cli::LedgerUpkeep upkeep(*ledger, uo);
  upkeep.start();
  double rssTenth = 0, rssHalf = 0;
  ingest::IngestOptions io;
  io.batchRecords = 1000;  // kube::WriterOptions' default
  io.onCommit = [&](const AppendResult& r) {
    if (r.firstSeq == 0) return;
    live.afterCommit(r.firstSeq, r.lastSeq);
    upkeep.afterCommit(r.lastSeq);
    // A scrape after each commit: the report is built at most once a second.
    (void)live.metricsText(nowNs());
    if (rssTenth == 0 && r.lastSeq * 10 >= lines) rssTenth = peakRssMb();
    if (rssHalf == 0 && r.lastSeq * 2 >= lines) rssHalf = peakRssMb();
  };
  ingest::Ingester ingester(*ledger, io);
  std::ifstream in(jsonlPath, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + jsonlPath);
  ingest::StreamOptions options;
  options.reader.dropManagedFields = true;
  options.reader.storedJson = true;
  options.reader.projection = true;
  const double start = nowSeconds();
  (void)ingest::ingestStream(in, "file:" + jsonlPath, ingester, options);
  ingester.flush();
  const double seconds = nowSeconds() - start;
  upkeep.stop();
  const double rss = peakRssMb();
  return {{"records", static_cast<double>(ledger->lastSeq())},
          {"seconds", seconds},
          {"rssTenthMb", rssTenth},
          {"rssHalfMb", rssHalf},
          {"rssMb", rss},
          {"checkpointSeq", static_cast<double>(upkeep.checkpointSeq())}};
}

}  // namespace ledger::bench
