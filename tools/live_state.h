// The --watch daemon's folded state, kept live: restored at construction
// from the newest checkpoint plus the records after it (Replayer::foldTo),
// then advanced after each commit by the same fold (Replayer::foldInto), so
// the numbers /metrics shows are those `ledger-replay` and `ledger-query`
// compute on the same ledger at the same seq.
//
// The writer thread calls afterCommit() (LedgerWriter's hook); the HTTP
// threads call metricsText(). The report (replay::buildReport) is built on
// a scrape, not on each commit, and at most once per `minInterval` while
// the state keeps changing: a burst of commits costs folds only, and a
// scrape sees a change at most minInterval late. A scrape that builds the
// report holds the state's lock meanwhile, so the next fold (and the commit
// after it) waits for it.
//
// A report listener (setReportListener: the --emit-events announcer) sees
// each report built, still under the lock; refresh() builds one on the same
// terms as a scrape, for a caller that needs findings without scrapes.
//
// Ownership: borrows the Ledger, which must outlive the LiveState.
// Thread safety: every member may be called from any thread (one mutex);
// afterCommit() is meant for the one writer thread.
// Errors: the constructor throws replay::ReplayError when the ledger cannot
// be folded (the caller exits as ledger-replay would). Later, a fold or
// report that fails (a damaged stored object) is logged once and freezes
// the metrics at the last good state, with ledger_live_state_ok 0; nothing
// throws into the writer or the HTTP threads except std::bad_alloc.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "ledger/ledger.h"
#include "replay/fold/cluster_state.h"
#include "replay/kueue/report.h"
#include "tools/watch/admission_waits.h"

namespace ledger::cli {

class LiveState {
 public:
  explicit LiveState(const Ledger& ledger,
                     std::chrono::milliseconds minInterval = std::chrono::seconds(1));
  LiveState(const LiveState&) = delete;
  LiveState& operator=(const LiveState&) = delete;

  // Folds the records up to `lastSeq` (the committed range's end).
  void afterCommit(std::uint64_t firstSeq, std::uint64_t lastSeq);
  // The report's metrics (tools/render/report_metrics.h), the waits per
  // ClusterQueue (tools/watch/admission_waits.h, followed with each commit)
  // and the live state's own: ledger_live_state_ok,
  // ledger_last_record_age_seconds.
  std::string metricsText(std::int64_t nowNs);
  // The last record folded.
  std::uint64_t seq() const;
  // The checkpoint the constructor restored from (0: folded from the start).
  std::uint64_t restoredFrom() const { return restoredFrom_; }

  // Called with the state and each report built from it, under the live
  // state's lock (so never concurrently, and it must not call back into
  // this LiveState); it must not throw. Set it before the first commit.
  using ReportListener =
      std::function<void(const replay::ClusterState&, const replay::StateReport&)>;
  void setReportListener(ReportListener listener);
  // Builds the report if a scrape now would (at most once per minInterval
  // while the state changes).
  void refresh();

 private:
  void render();       // mu_ held
  void renderIfDue();  // mu_ held

  const Ledger& ledger_;
  const std::chrono::milliseconds minInterval_;
  std::uint64_t restoredFrom_ = 0;
  mutable std::mutex mu_;
  replay::ClusterState state_;
  bool ok_ = true;
  bool dirty_ = true;
  std::chrono::steady_clock::time_point renderedAt_;
  std::string rendered_;
  std::int64_t renderedTimeNs_ = 0;  // the rendered state's last record time
  ReportListener listener_;
  AdmissionWaits waits_;  // stored wait data (or the history) at construction, then each commit
};

}  // namespace ledger::cli
