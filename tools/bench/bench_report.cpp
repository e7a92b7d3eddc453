#include "tools/bench/bench_report.h"

#include <algorithm>
#include <cstdio>

namespace ledger::bench {

double get(const PhaseOutcome& p, const char* key) {
  auto it = p.metrics.find(key);
  return it == p.metrics.end() ? 0 : it->second;
}

namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// 1234567 -> "1.23M", 45600 -> "45.6k".
std::string human(double v) {
  if (v >= 1e9) return fmt("%.2fG", v / 1e9);
  if (v >= 1e6) return fmt("%.2fM", v / 1e6);
  if (v >= 1e3) return fmt("%.1fk", v / 1e3);
  return fmt("%.0f", v);
}

double rate(double n, double seconds) { return seconds > 0 ? n / seconds : 0; }
double ratio(double a, double b) { return b > 0 ? a / b : 0; }
const char* verdict(bool met) { return met ? "met" : "**missed**"; }

struct Derived {
  double ingestEps, ingestMbps, rawEps, rawMbps, replayRps, scanRps, fullMs, medianMs, p99Ms;
  double fullBeforeMs = 0, fullAfterMs = 0;                // the two full replays fullMs averages
  double coldFullMs = 0, coldMedianMs = 0, coldP99Ms = 0;  // page cache dropped
  double stored, checkpoints;
  // Per CPU-second (all threads of the phase's process): robust to a busy machine.
  double ingestCpuMbps, rawCpuMbps, replayCpuRps, scanCpuRps;
};

Derived derive(const SizeRun& r) {
  Derived d{};
  const double mb = 1024.0 * 1024.0;
  d.ingestEps = rate(get(r.ingest, "values"), get(r.ingest, "seconds"));
  d.ingestMbps = rate(get(r.ingest, "bytes") / mb, get(r.ingest, "seconds"));
  d.rawEps = rate(get(r.rawWrite, "records"), get(r.rawWrite, "seconds"));
  d.rawMbps = rate(get(r.rawWrite, "bytes") / mb, get(r.rawWrite, "seconds"));
  d.replayRps = rate(get(r.replay, "records"), get(r.replay, "seconds"));
  d.scanRps = rate(get(r.rawScan, "records"), get(r.rawScan, "seconds"));
  // The queries against the mean of the full replays timed before and after
  // them (the one before alone when the second did not run).
  const double after = get(r.replayAfterQueries, "seconds");
  d.fullBeforeMs = get(r.replay, "seconds") * 1000;
  d.fullAfterMs = after * 1000;
  d.fullMs = after > 0 ? (d.fullBeforeMs + d.fullAfterMs) / 2 : d.fullBeforeMs;
  d.medianMs = get(r.query, "foldMedianMs");
  d.p99Ms = get(r.query, "foldP99Ms");
  d.coldFullMs = get(r.replayCold, "seconds") * 1000;
  d.coldMedianMs = get(r.queryCold, "foldMedianMs");
  d.coldP99Ms = get(r.queryCold, "foldP99Ms");
  d.stored = r.ledgerBytes;
  d.checkpoints = r.checkpointBytes;
  d.ingestCpuMbps = rate(get(r.ingest, "bytes") / mb, get(r.ingest, "cpuSeconds"));
  d.rawCpuMbps = rate(get(r.rawWrite, "bytes") / mb, get(r.rawWrite, "cpuSeconds"));
  d.replayCpuRps = rate(get(r.replay, "records"), get(r.replay, "cpuSeconds"));
  d.scanCpuRps = rate(get(r.rawScan, "records"), get(r.rawScan, "cpuSeconds"));
  return d;
}

// `text` inside a markdown table cell.
std::string cell(std::string text) {
  for (std::size_t i = text.find('|'); i != std::string::npos; i = text.find('|', i + 2)) {
    text.insert(i, "\\");
  }
  return text;
}

// The questions asked of the real ledger-query (end_to_end.h): the median
// wall time against the full replay, with the targets where they
// apply (a wall time at 10M records, a share of the replay from 1M).
void printEndToEndRows(std::ostream& out, const SizeRun& r, const Derived& d) {
  for (const EndToEndAnswer& a : r.endToEnd) {
    const EndToEndQuestion& q = a.question;
    out << "| " << q.row << ", end to end, median of " << a.runs << " | ";
    if (!a.ok) {
      out << "failed | | | " << cell(a.error) << " |\n";
      continue;
    }
    const double share = ratio(a.medianMs, d.fullMs);
    std::string target;
    if (q.targetMsAt10M) {
      target += "<= " + fmt("%.0f", *q.targetMsAt10M) + " ms at 10M: " +
                (r.events >= 10000000 ? verdict(a.medianMs <= *q.targetMsAt10M) : "n/a below 10M");
    }
    if (q.targetRatioAt1M) {
      target += std::string(target.empty() ? "" : "; ") + "<= " + fmt("%.2g", *q.targetRatioAt1M) +
                " of the replay from 1M: " +
                (r.events >= 1000000 ? verdict(share <= *q.targetRatioAt1M) : "n/a below 1M");
    }
    out << fmt("%.0f", a.medianMs) << " ms (" << fmt("%.0f", a.minMs) << "-" << fmt("%.0f", a.maxMs)
        << ") | " << fmt("%.0f", d.fullMs) << " ms (full replay) | " << fmt("%.3f", share) << " | "
        << target << " |\n";
  }
}

// The rows both tables share: replay against the raw scan, point-in-time
// queries against the full replay, and the state report.
void printReadRows(std::ostream& out, const SizeRun& r, const Derived& d, const Targets& t) {
  out << "| replay, records/s | " << human(d.replayRps) << " | " << human(d.scanRps)
      << " (raw scan of the projection) | " << fmt("%.2f", ratio(d.replayRps, d.scanRps))
      << " | >= " << t.replayRatio << ": "
      << verdict(ratio(d.replayRps, d.scanRps) >= t.replayRatio) << " |\n";
  out << "| replay, records per CPU-second | " << human(d.replayCpuRps) << " | "
      << human(d.scanCpuRps) << " | " << fmt("%.2f", ratio(d.replayCpuRps, d.scanCpuRps))
      << " | |\n";
  const double speedup = ratio(d.fullMs, d.medianMs);
  out << "| point-in-time query, median (page cache warm, as for the replay) | "
      << fmt("%.2f", d.medianMs) << " ms | " << fmt("%.0f", d.fullMs)
      << " ms (full replay: mean of " << fmt("%.0f", d.fullBeforeMs) << " before and "
      << fmt("%.0f", d.fullAfterMs) << " after the queries) | " << fmt("%.0f", speedup)
      << "x | >= " << fmt("%.0f", t.pointInTimeSpeedup) << "x at 10M: "
      << (r.events >= 10000000 ? verdict(speedup >= t.pointInTimeSpeedup) : "n/a below 10M")
      << " |\n";
  out << "| point-in-time query, p99 | " << fmt("%.2f", d.p99Ms) << " ms | | "
      << fmt("%.0f", ratio(d.fullMs, d.p99Ms)) << "x | |\n";
  out << "| point-in-time query, page cache dropped before each, median / p99 | "
      << fmt("%.2f", d.coldMedianMs) << " / " << fmt("%.2f", d.coldP99Ms) << " ms | "
      << fmt("%.0f", d.coldFullMs) << " ms (full replay, page cache dropped) | "
      << fmt("%.0f", ratio(d.coldFullMs, d.coldMedianMs)) << "x | |\n";
  out << "| state report after a query (20 queries), median / p99 | "
      << fmt("%.2f", get(r.query, "reportMedianMs")) << " / "
      << fmt("%.2f", get(r.query, "reportP99Ms")) << " ms | | | |\n";
  printEndToEndRows(out, r, d);
}

// How the queries were timed, and what the page cache held.
std::string queryNote(const SizeRun& r) {
  return "Query: seqAt + foldTo from the nearest checkpoint, report excluded. Page cache warm: "
         "the queries' process first read every family a query reads in full (" +
         fmt("%.0f", get(r.query, "warmBytes") / (1024.0 * 1024.0)) + " MB in " +
         fmt("%.1f", get(r.query, "warmSeconds")) +
         " s, untimed), as the raw scan before the replay reads its family. Page cache "
         "dropped: posix_fadvise(DONTNEED) on every file of the ledger before the replay and "
         "before each query (RocksDB's caches in the process stay, as in a long-running "
         "reader). End to end: the real ledger-query of this build, a process per run timed "
         "from its start to its exit with its output discarded, after one untimed run; the "
         "ratio is to the full replay (the mean of the two).";
}

}  // namespace

// The object index and the usage rollups on disk, against the rest of the
// ledger (checkpoints aside), as the checkpoint phase left them.
void printDerivedStorageRow(std::ostream& out, const SizeRun& r) {
  const double mb = 1024.0 * 1024.0;
  const double index = get(r.checkpoints, "bytes.object_index");
  const double rollups = get(r.checkpoints, "bytes.usage_rollups");
  const double ledgerBytes = get(r.checkpoints, "bytes.total") -
                             get(r.checkpoints, "bytes.checkpoints") -
                             get(r.checkpoints, "bytes.checkpoint_objects") - index - rollups;
  const double share = ratio(index + rollups, ledgerBytes);
  out << "| object index + usage rollups (" << fmt("%.0f", get(r.checkpoints, "rollupsWritten"))
      << " rollups written in " << fmt("%.1f", get(r.checkpoints, "rollupSeconds")) << " s) | "
      << fmt("%.1f", index / mb) << " + " << fmt("%.1f", rollups / mb) << " MB | "
      << fmt("%.1f", ledgerBytes / mb) << " MB (the rest, checkpoints aside) | "
      << fmt("%.1f%%", share * 100) << " | <= 5%: " << verdict(share <= 0.05) << " |\n";
}

void printLiveRow(std::ostream& out, const SizeRun& r) {
  out << "| daemon (live state, checkpoints): peak RSS at 10% / 50% / all of the stream | "
      << fmt("%.0f", get(r.live, "rssTenthMb")) << " / " << fmt("%.0f", get(r.live, "rssHalfMb"))
      << " / " << fmt("%.0f", get(r.live, "rssMb")) << " MB | "
      << fmt("%.0f", get(r.live, "records") / std::max(get(r.live, "seconds"), 1e-9))
      << " records/s, checkpoint at seq " << fmt("%.0f", get(r.live, "checkpointSeq")) << " | "
      << fmt("%.2f", ratio(get(r.live, "rssMb"), get(r.live, "rssTenthMb")))
      << " (all / 10%) | flat |\n";
}

void printLiveTable(std::ostream& out, const SizeRun& r) {
  out << "\n### " << human(static_cast<double>(r.events)) << " events, the daemon's path alone\n\n"
      << "| measure | ledger | | ratio | target |\n|---|---|---|---|---|\n";
  printLiveRow(out, r);
}

void printSizeTable(std::ostream& out, const SizeRun& r, std::size_t batch, const Targets& t) {
  const Derived d = derive(r);
  const double mb = 1024.0 * 1024.0;
  out << "\n### " << human(static_cast<double>(r.events)) << " events ("
      << fmt("%.0f", r.jsonBytes / mb) << " MB of JSON, generated in "
      << fmt("%.1f", r.generateSeconds) << " s)\n\n";
  out << "| measure | ledger | baseline | ratio | target |\n|---|---|---|---|---|\n";
  out << "| ingest, events/s | " << human(d.ingestEps) << " | " << human(d.rawEps)
      << " (raw RocksDB write) | " << fmt("%.2f", ratio(d.ingestEps, d.rawEps))
      << " | >= " << t.ingestRatio << ": " << verdict(ratio(d.ingestEps, d.rawEps) >= t.ingestRatio)
      << " |\n";
  out << "| ingest, MB/s of JSON | " << fmt("%.1f", d.ingestMbps) << " | " << fmt("%.1f", d.rawMbps)
      << " | " << fmt("%.2f", ratio(d.ingestMbps, d.rawMbps)) << " | |\n";
  out << "| ingest, MB of JSON per CPU-second | " << fmt("%.1f", d.ingestCpuMbps) << " | "
      << fmt("%.1f", d.rawCpuMbps) << " | " << fmt("%.2f", ratio(d.ingestCpuMbps, d.rawCpuMbps))
      << " | (work done, whatever else runs) |\n";
  const double tableEps = rate(get(r.rawTableWrite, "records"), get(r.rawTableWrite, "seconds"));
  const double tableMbps =
      rate(get(r.rawTableWrite, "bytes") / mb, get(r.rawTableWrite, "seconds"));
  out << "| ingest, events/s, against the raw write as table files (as the ledger writes its "
         "log) | "
      << human(d.ingestEps) << " | " << human(tableEps) << " (" << fmt("%.1f", tableMbps)
      << " MB/s) | " << fmt("%.2f", ratio(d.ingestEps, tableEps)) << " | >= " << t.tableWriteRatio
      << ": " << verdict(ratio(d.ingestEps, tableEps) >= t.tableWriteRatio) << " |\n";
  printReadRows(out, r, d, t);
  const double share = ratio(d.stored, r.jsonBytes);
  out << "| stored bytes (ledger, no checkpoints) | " << fmt("%.1f", d.stored / mb) << " MB | "
      << fmt("%.1f", r.jsonBytes / mb) << " MB raw JSON | " << fmt("%.1f%%", share * 100)
      << " | <= " << fmt("%.0f%%", t.storedShare * 100) << ": " << verdict(share <= t.storedShare)
      << " |\n";
  // Everything on disk after ingest, checkpoints included, as `ledger-replay
  // stats` reports it (bytesOnDisk).
  const double perRecord = ratio(get(r.settle, "bytes.total"), static_cast<double>(r.events));
  out << "| bytes per record on disk (after ingest, checkpoints included) | "
      << fmt("%.0f", perRecord) << " | | | <= " << fmt("%.0f", t.bytesPerRecord) << ": "
      << verdict(perRecord <= t.bytesPerRecord) << " |\n";
  out << "| stored bytes: log / projection / indexes | "
      << fmt("%.1f", get(r.settle, "bytes.log") / mb) << " / "
      << fmt("%.1f", get(r.settle, "bytes.projection") / mb) << " / "
      << fmt("%.1f", (get(r.settle, "bytes.time_index") + get(r.settle, "bytes.events") +
                      get(r.settle, "bytes.live")) /
                         mb)
      << " MB | " << fmt("%.1f", get(r.rawWrite, "dbBytes") / mb)
      << " MB (raw JSON in RocksDB, zstd) | | |\n";
  out << "| checkpoint bytes (" << fmt("%.0f", get(r.checkpoints, "written")) << " every "
      << fmt("%.0f", get(r.checkpoints, "interval")) << " records, written in "
      << fmt("%.1f", get(r.checkpoints, "seconds")) << " s) | " << fmt("%.1f", d.checkpoints / mb)
      << " MB | | " << fmt("%.1f%%", ratio(d.checkpoints, r.jsonBytes) * 100)
      << " of raw JSON | |\n";
  printDerivedStorageRow(out, r);
  out << "| peak RSS: ingest / replay / query | " << fmt("%.0f", r.ingest.maxRssMb) << " / "
      << fmt("%.0f", get(r.replay, "rssMb")) << " / " << fmt("%.0f", r.query.maxRssMb) << " MB | "
      << fmt("%.0f", r.rawWrite.maxRssMb) << " MB (raw write) | | replay flat |\n";
  printLiveRow(out, r);
  out << "\nIngest: batches of " << batch
      << " records, sync off for both the ledger and the raw write. Replay: Replayer::foldTo "
         "without checkpoints, state report excluded (built afterwards in "
      << fmt("%.2f", get(r.replay, "reportSeconds")) << " s; "
      << fmt("%.0f", get(r.replay, "liveObjects")) << " live objects, "
      << fmt("%.0f", get(r.replay, "findings")) << " findings). " << queryNote(r) << "\n";
  for (const PhaseOutcome* p : {&r.rawWrite, &r.rawTableWrite, &r.ingest, &r.settle}) {
    if (!p->ok) out << "\nA phase failed: " << p->error << "\n";
  }
  for (const PhaseOutcome* p : r.readPhases()) {
    if (!p->ok) out << "\nA phase failed: " << p->error << "\n";
  }
}

void printScaling(std::ostream& out, const std::vector<SizeRun>& runs) {
  out << "\n### Scaling\n\n| events | ingest MB/s (vs raw: wall, CPU) | replay records/s (vs "
         "raw scan: wall, CPU) | full replay | query median / p99 (speedup) | end to end, median "
         "(share of the full replay) | stored / raw JSON | peak RSS ingest / replay / query "
         "|\n|---|---|---|---|---|---|---|---|\n";
  for (const SizeRun& r : runs) {
    const Derived d = derive(r);
    out << "| " << human(static_cast<double>(r.events)) << " | " << fmt("%.1f", d.ingestMbps)
        << " (" << fmt("%.2f", ratio(d.ingestMbps, d.rawMbps)) << ", "
        << fmt("%.2f", ratio(d.ingestCpuMbps, d.rawCpuMbps)) << ") | " << human(d.replayRps) << " ("
        << fmt("%.2f", ratio(d.replayRps, d.scanRps)) << ", "
        << fmt("%.2f", ratio(d.replayCpuRps, d.scanCpuRps)) << ") | "
        << fmt("%.2f", d.fullMs / 1000) << " s | " << fmt("%.1f", d.medianMs) << " / "
        << fmt("%.1f", d.p99Ms) << " ms (" << fmt("%.0f", ratio(d.fullMs, d.medianMs)) << "x) | ";
    std::string endToEnd;
    for (const EndToEndAnswer& a : r.endToEnd) {
      endToEnd +=
          (endToEnd.empty() ? "" : "; ") + a.question.brief + " " +
          (a.ok ? fmt("%.0f", a.medianMs) + " ms (" + fmt("%.3f", ratio(a.medianMs, d.fullMs)) + ")"
                : std::string("failed"));
    }
    out << endToEnd << " | " << fmt("%.1f%%", ratio(d.stored, r.jsonBytes) * 100) << " | "
        << fmt("%.0f", r.ingest.maxRssMb) << " / " << fmt("%.0f", get(r.replay, "rssMb")) << " / "
        << fmt("%.0f", r.query.maxRssMb) << " MB |\n";
  }
}

void printLedgerTable(std::ostream& out, const SizeRun& r, const Targets& t) {
  const Derived d = derive(r);
  const double mb = 1024.0 * 1024.0;
  out << "\n### " << human(static_cast<double>(r.events)) << " records (existing ledger, "
      << fmt("%.0f", r.ledgerBytes / mb) << " MB without checkpoints)\n\n";
  out << "| measure | ledger | baseline | ratio | target |\n|---|---|---|---|---|\n";
  printReadRows(out, r, d, t);
  out << "| checkpoint bytes (" << fmt("%.0f", get(r.checkpoints, "written"))
      << " written now, every " << fmt("%.0f", get(r.checkpoints, "interval")) << " records) | "
      << fmt("%.1f", d.checkpoints / mb) << " MB | " << fmt("%.1f", r.ledgerBytes / mb)
      << " MB (ledger) | " << fmt("%.1f%%", ratio(d.checkpoints, r.ledgerBytes) * 100)
      << " extra | |\n";
  printDerivedStorageRow(out, r);
  out << "| peak RSS: replay / query | " << fmt("%.0f", get(r.replay, "rssMb")) << " / "
      << fmt("%.0f", r.query.maxRssMb) << " MB | | | |\n";
  out << "\nReplay: Replayer::foldTo without checkpoints, state report excluded (built afterwards "
         "in "
      << fmt("%.2f", get(r.replay, "reportSeconds")) << " s; "
      << fmt("%.0f", get(r.replay, "liveObjects")) << " live objects, "
      << fmt("%.0f", get(r.replay, "findings")) << " findings). " << queryNote(r) << "\n";
  if (!r.settle.ok) out << "\nA phase failed: " << r.settle.error << "\n";
  for (const PhaseOutcome* p : r.readPhases()) {
    if (!p->ok) out << "\nA phase failed: " << p->error << "\n";
  }
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  auto rank = static_cast<std::size_t>(p * static_cast<double>(samples.size()) + 0.999999);
  rank = std::clamp<std::size_t>(rank, 1, samples.size());
  return samples[rank - 1];
}

}  // namespace ledger::bench
