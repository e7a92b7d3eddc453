#include "tools/watch/admission_waits.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "ingest/net/exposition.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/wait_rollups.h"
#include "replay/kueue/wait_store.h"
#include "tools/render/report_metrics.h"

namespace ledger::cli {

namespace {

std::string waitNumber(double v) {
  char text[48];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

}  // namespace

void AdmissionWaits::observe(const std::string& clusterQueue, std::int64_t waitNs) {
  Histogram& h = histograms_[clusterQueue];
  const double seconds = static_cast<double>(waitNs) / 1e9;
  // Prometheus buckets are upper bounds, inclusive (le).
  const auto at =
      std::lower_bound(kAdmissionWaitBuckets.begin(), kAdmissionWaitBuckets.end(), seconds) -
      kAdmissionWaitBuckets.begin();
  if (static_cast<std::size_t>(at) < h.buckets.size()) ++h.buckets[static_cast<std::size_t>(at)];
  ++h.count;
  h.sumNs += waitNs;
}

bool AdmissionWaits::restore(const Ledger& ledger, std::uint64_t lastSeq) {
  try {
    const auto resume = replay::resumeWaits(
        ledger, lastSeq, follower_,
        [this](const replay::WaitSample& s) { observe(s.clusterQueue, s.waitNs); });
    if (!resume) return false;
    seq_ = resume->seq;
    handedBeforeNs_ = resume->handedBeforeNs;
    return true;
  } catch (const replay::ReplayError& e) {
    if (!e.corrupt()) throw;
    // A damaged stored value: the whole history instead (verify names it).
    histograms_.clear();
    follower_ = replay::WaitFollower(replay::WaitGrouping::kClusterQueue);
    return false;
  }
}

std::uint64_t AdmissionWaits::carriedState(const Ledger& ledger) {
  try {
    return replay::restoreWaitState(ledger, 0, follower_);
  } catch (const replay::ReplayError& e) {
    if (!e.corrupt()) throw;
    return 0;  // verify names it
  }
}

void AdmissionWaits::follow(const Ledger& ledger, std::uint64_t lastSeq) {
  if (lastSeq <= seq_) return;
  if (seq_ == 0 && !restored_) {
    restored_ = true;
    startedFromStored_ = restore(ledger, lastSeq);
    // Else on a cut ledger from the state the cut carried (wait_store.h),
    // which knows the workloads still pending across it.
    if (!startedFromStored_) seq_ = carriedState(ledger);
    if (lastSeq <= seq_) return;
  }
  const auto onAdmission = [this](const replay::WaitSample& s) {
    // The stored hours handed these out already.
    if (s.atNs >= handedBeforeNs_) observe(s.clusterQueue, s.waitNs);
  };
  // An archived ledger (ledger-replay archive) holds the records after its cut only.
  const Status st = ledger.scanProjections(std::max(seq_ + 1, ledger.firstSeq()), lastSeq,
                                           [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
                                             follower_.follow(r, onAdmission);
                                             return true;
                                           });
  if (!st.isOk()) throw replay::ReplayError(st);
  seq_ = lastSeq;
}

std::string AdmissionWaits::metricsText() const {
  const auto pending = follower_.pendingByGroup();
  if (histograms_.empty() && pending.empty()) return {};
  std::string out =
      "# HELP ledger_admission_wait_time_seconds The time between a workload was created or "
      "requeued until admission, per 'cluster_queue', over the ledger's history (Kueue's "
      "kueue_admission_wait_time_seconds).\n"
      "# TYPE ledger_admission_wait_time_seconds histogram\n";
  for (const auto& [cq, h] : histograms_) {
    const std::string label = "cluster_queue=\"" + net::labelValue(cq) + "\"";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
      cumulative += h.buckets[i];
      out += "ledger_admission_wait_time_seconds_bucket{" + label + ",le=\"" +
             waitNumber(kAdmissionWaitBuckets[i]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "ledger_admission_wait_time_seconds_bucket{" + label + ",le=\"+Inf\"} " +
           std::to_string(h.count) + "\n";
    out += "ledger_admission_wait_time_seconds_sum{" + label + "} " +
           waitNumber(static_cast<double>(h.sumNs) / 1e9) + "\n";
    out +=
        "ledger_admission_wait_time_seconds_count{" + label + "} " + std::to_string(h.count) + "\n";
  }
  // Every ClusterQueue seen, 0 when none waits: an alert sees 0 before the first.
  std::set<std::string> queues;
  for (const auto& [cq, h] : histograms_) queues.insert(cq);
  for (const auto& [cq, n] : pending) queues.insert(cq);
  out +=
      "# HELP ledger_pending_workloads The workloads neither admitted nor finished, per "
      "'cluster_queue' (Kueue's kueue_pending_workloads summed over its status).\n"
      "# TYPE ledger_pending_workloads gauge\n";
  for (const auto& cq : queues) {
    const auto it = pending.find(cq);
    out += "ledger_pending_workloads{cluster_queue=\"" + net::labelValue(cq) + "\"} " +
           std::to_string(it == pending.end() ? 0 : it->second) + "\n";
  }
  return out;
}

}  // namespace ledger::cli
