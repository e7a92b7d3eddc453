#include "replay/history/why.h"

#include <algorithm>

#include "replay/history/blocked_by.h"
#include "replay/history/preemption_check.h"
#include "replay/kueue/workload_history.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::replay::history {

namespace {

// A finding of this analysis, in the state report's shape.
Finding finding(std::string type, std::string object, std::string message) {
  return {std::move(type), std::move(object), std::move(message)};
}

// An interval with the records that began and ended it.
struct Span {
  WhyInterval interval;
  std::uint64_t startSeq = 0, endSeq = 0;  // endSeq 0: open
};

// The state changes of the history as intervals; a deletion ends the last.
std::vector<Span> spansOf(const WorkloadHistory& history) {
  std::vector<Span> spans;
  for (const auto& e : history.entries) {
    const bool open = !spans.empty() && spans.back().endSeq == 0;
    if (open && spans.back().interval.state == e.state) continue;
    if (e.event != "Created" && e.event != "QuotaReserved" && e.event != "Admitted" &&
        e.event != "Evicted" && e.event != "Requeued" && e.event != "Finished" &&
        e.event != "Deleted") {
      continue;
    }
    if (open) {
      spans.back().interval.toNs = e.timeNs;
      spans.back().endSeq = e.seq;
    }
    if (e.state == "Deleted") continue;
    Span s;
    s.interval.fromNs = e.timeNs;
    s.interval.state = e.state;
    s.interval.reason = e.detail;
    s.startSeq = e.seq;
    spans.push_back(std::move(s));
  }
  return spans;
}

}  // namespace

WhyReport explainWorkload(const Ledger& ledger, const std::string& ns, const std::string& name,
                          std::optional<std::int64_t> fromNs, std::optional<std::int64_t> toNs,
                          const FoldOptions& fold) {
  WhyReport out;
  out.workload = ns + "/" + name;
  const WorkloadHistory history = workloadHistory(ledger, ns, name, std::nullopt, toNs);
  out.found = history.found;
  if (!history.found) return out;
  const Replayer replayer(ledger);
  const std::uint64_t lastSeq = toNs ? replayer.seqAt(*toNs) : ledger.lastSeq();
  const std::uint64_t firstSeq = fromNs ? replayer.seqAt(*fromNs) : 0;
  for (Span& span : spansOf(history)) {
    WhyInterval& i = span.interval;
    if (fromNs && i.toNs && *i.toNs < *fromNs) continue;
    if (fromNs && i.fromNs < *fromNs) i.fromNs = *fromNs;
    if (i.state == "Pending") {
      // What held the quota when it began to wait (or when asked to look),
      // and Kueue's last word on it before the wait ended.
      const std::uint64_t start = std::max(span.startSeq, firstSeq);
      const ClusterState begun = replayer.foldTo(start, fold);
      const Blocked blocked = blockedAt(begun, ns, name);
      i.blockedBy = blocked.holders;
      i.shortfalls = blocked.shortfalls;
      const std::uint64_t last = span.endSeq != 0 ? span.endSeq - 1 : lastSeq;
      const std::string said = last == start
                                   ? quotaReservedText(begun, ns, name)
                                   : quotaReservedText(replayer.foldTo(last, fold), ns, name);
      if (!said.empty()) i.reason = said;
    }
    out.intervals.push_back(std::move(i));
  }
  for (const auto& e : history.entries) {
    if (e.event != "Evicted" || (fromNs && e.timeNs < *fromNs)) continue;
    EvictionExplained ev = explainEviction(ledger, ns, name, e.seq, lastSeq, fold);
    if (ev.conforms == false) {
      out.findings.push_back(finding("UnexpectedPreemption", "Workload " + out.workload,
                                     "evicted at " + formatRfc3339(ev.atNs) + " by " +
                                         ev.preemptor + " under " + ev.policy + ": " +
                                         ev.explanation));
    }
    out.evictions.push_back(std::move(ev));
  }
  return out;
}

}  // namespace ledger::replay::history
