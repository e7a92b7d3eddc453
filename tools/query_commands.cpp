#include "tools/query_commands.h"

#include "replay/fold/observations.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/usage_report.h"
#include "replay/kueue/usage_rollups.h"
#include "replay/kueue/workload_history.h"
#include "schema/k8s/rfc3339.h"
#include "tools/admit_command.h"
#include "tools/progress.h"
#include "tools/query/findings_timeline.h"
#include "tools/query/waits_command.h"
#include "tools/query/why_command.h"
#include "tools/render/coverage_format.h"
#include "tools/render/json_text.h"
#include "tools/render/proof_format.h"
#include "tools/render/quantity_text.h"
#include "tools/render/report_format.h"
#include "tools/render/usage_chart.h"
#include "tools/report_command.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

namespace ledger::cli {

namespace {

// The seq a query is about: --seq, else --at, else the end of the log.
std::uint64_t resolveSeq(const Ledger& ledger, const QueryArgs& args, bool required) {
  if (args.seq && args.at) throw UsageError("give --at or --seq, not both");
  if (args.seq) {
    // As serve answers seq:N past the end (400): a moment the ledger has not
    // reached is not its last one.
    if (*args.seq > ledger.lastSeq()) {
      throw UsageError("--seq " + std::to_string(*args.seq) + " is past the ledger's end (seq " +
                       std::to_string(ledger.lastSeq()) + ")");
    }
    return *args.seq;
  }
  if (args.at) {
    checkMoment(ledger, *args.at);
    return replay::Replayer(ledger).seqAt(*args.at);
  }
  if (required) throw UsageError("give the moment with --at TIME or --seq N");
  return ledger.lastSeq();
}

replay::ClusterState stateAt(const Ledger& ledger, std::uint64_t seq, const QueryArgs& args) {
  ProgressBar progress("query");
  replay::FoldOptions fo;
  fo.useCheckpoints = args.useCheckpoints;
  fo.progress = progress.callback();
  fo.onBadCheckpoint = warnBadCheckpoint;
  return replay::Replayer(ledger).foldTo(seq, fo);
}

int runState(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  const auto state = stateAt(ledger, resolveSeq(ledger, args, true), args);
  auto report = replay::buildReport(state);
  filterReport(report, args.filter);
  if (args.output == OutputFormat::kJson) {
    out << render::reportJsonText(report) << "\n";
  } else {
    out << render::reportToTable(report,
                                 {.wide = args.wide, .findingsOnly = args.filter.findingsOnly});
  }
  return kExitOk;
}

// A mean level as a short exact decimal: trailing zeros dropped.
std::string meanText(const replay::Integral& integral, std::int64_t periodNs) {
  // Most keys hold no device and borrow nothing: most held and uncharged
  // points are zero.
  if (integral.isZero()) return "0";
  std::string text = integral.meanOver(periodNs);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

// (ClusterQueue, flavor, resource) -> per step: reserved, admitted, nominal,
// and what pods held through ResourceClaims (held) beyond their charge
// (uncharged).
using SeriesKey = std::tuple<std::string, std::string, std::string>;
struct SeriesPoint {
  replay::Integral reserved, admitted, nominal, held, uncharged;
};
using Series = std::map<SeriesKey, std::vector<SeriesPoint>, std::less<>>;

// usage --step's answer: the series as JSON (with coverage and the last
// record's time), CSV or a table (their notes and warnings on stderr).
void printSeries(const Series& series, const std::vector<std::int64_t>& boundaries,
                 const QueryArgs& args, const replay::Coverage& coverage,
                 std::optional<std::int64_t> lastRecord, std::ostream& out) {
  const std::size_t steps = boundaries.size() - 1;
  auto lengthOf = [&](std::size_t i) { return boundaries[i + 1] - boundaries[i]; };
  if (args.output != OutputFormat::kJson) {
    std::cerr << render::afterLastRecordNote(lastRecord, *args.to)
              << render::coverageWarnings(coverage, *args.from);
  }
  if (args.output == OutputFormat::kJson) {
    // Written as text: a month of hourly points for every queue is a
    // hundred thousand objects, and a tree of nodes first doubled the time.
    render::JsonText j;
    // About 120 bytes a point, written once instead of grown by doubling.
    j.reserve(series.size() * steps * 128 + 4096);
    j.beginObject();
    j.key("from");
    j.string(formatRfc3339(*args.from));
    j.key("to");
    j.string(formatRfc3339(*args.to));
    j.key("step");
    j.string(args.stepText);
    render::writeLastRecord(j, lastRecord, *args.to);
    j.key("coverage");
    render::writeCoverage(j, coverage);
    j.key("series");
    j.beginArray();
    std::vector<std::string> times;
    for (std::size_t i = 0; i < steps; ++i) times.push_back(formatRfc3339(boundaries[i]));
    for (const auto& [key, points] : series) {
      j.beginObject();
      j.key("clusterQueue");
      j.string(std::get<0>(key));
      j.key("flavor");
      j.string(std::get<1>(key));
      j.key("resource");
      j.string(std::get<2>(key));
      j.key("points");
      j.beginArray();
      for (std::size_t i = 0; i < points.size(); ++i) {
        j.beginObject();
        j.key("time");
        j.string(times[i]);
        j.key("reserved");
        j.string(meanText(points[i].reserved, lengthOf(i)));
        j.key("admitted");
        j.string(meanText(points[i].admitted, lengthOf(i)));
        j.key("nominal");
        j.string(meanText(points[i].nominal, lengthOf(i)));
        j.key("held");
        j.string(meanText(points[i].held, lengthOf(i)));
        j.key("uncharged");
        j.string(meanText(points[i].uncharged, lengthOf(i)));
        j.endObject();
      }
      j.endArray();
      j.endObject();
    }
    j.endArray();
    j.endObject();
    out << j.text() << "\n";
    return;
  }
  // The CSV keeps the exact means; the table reads as `state` does (80Gi).
  const bool human = args.output != OutputFormat::kCsv;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < steps; ++i) {
    for (const auto& [key, points] : series) {
      auto mean = [&](const replay::Integral& level) {
        const std::string text = meanText(level, lengthOf(i));
        return human ? render::humanMean(text, std::get<2>(key)) : text;
      };
      rows.push_back({formatRfc3339(boundaries[i]), std::get<0>(key), std::get<1>(key),
                      std::get<2>(key), mean(points[i].reserved), mean(points[i].admitted),
                      mean(points[i].nominal), mean(points[i].held), mean(points[i].uncharged)});
    }
  }
  if (args.output == OutputFormat::kCsv) {
    // held and uncharged last: the columns before keep their places.
    out << "time,cluster_queue,flavor,resource,reserved,admitted,nominal,held,uncharged\n";
    for (const auto& row : rows) {
      for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << row[c];
      out << "\n";
    }
  } else {
    out << render::renderTable({"TIME", "CLUSTERQUEUE", "FLAVOR", "RESOURCE", "RESERVED",
                                "ADMITTED", "NOMINAL", "HELD", "UNCHARGED"},
                               rows);
  }
}

// usage --from --to --step: the mean reserved, admitted and nominal quota,
// held and uncharged, per step and (ClusterQueue, flavor, resource), what a
// chart panel asks for.
int runUsageSeries(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  if (!args.from || !args.to) throw UsageError("usage --step needs --from TIME and --to TIME");
  if (*args.to <= *args.from) throw UsageError("--to must be after --from");
  constexpr std::uint64_t kMaxPoints = 100000;
  // Unsigned: the period may span the whole int64 range of times.
  const std::uint64_t span =
      static_cast<std::uint64_t>(*args.to) - static_cast<std::uint64_t>(*args.from);
  const std::uint64_t steps = span / static_cast<std::uint64_t>(*args.stepNs) +
                              (span % static_cast<std::uint64_t>(*args.stepNs) != 0 ? 1 : 0);
  if (steps > kMaxPoints) {
    throw UsageError("--step " + args.stepText + " makes " + std::to_string(steps) +
                     " points; at most " + std::to_string(kMaxPoints) + " (take a longer step)");
  }
  std::vector<std::int64_t> boundaries;
  for (std::uint64_t i = 0; i < steps; ++i) {
    boundaries.push_back(*args.from + static_cast<std::int64_t>(i) * *args.stepNs);
  }
  boundaries.push_back(*args.to);
  ProgressBar progress("usage");
  replay::FoldOptions fo;
  fo.useCheckpoints = args.useCheckpoints;
  fo.progress = progress.callback();
  fo.onBadCheckpoint = warnBadCheckpoint;
  Series series;
  std::size_t step = 0;
  // Consecutive buckets mostly hold the same keys in the same order: the
  // series of the previous bucket's n-th entry is tried first, then a lookup.
  struct Seen {
    const SeriesKey* key = nullptr;
    std::vector<SeriesPoint>* points = nullptr;
  };
  std::vector<Seen> seenReserved, seenQuota;
  auto add = [&](replay::UsageBucket&& bucket) {
    auto pointOf = [&](std::vector<Seen>& seen, std::size_t n, std::string_view queue,
                       std::string_view flavor, std::string_view resource) -> SeriesPoint& {
      if (n >= seen.size()) seen.resize(n + 1);
      Seen& s = seen[n];
      if (s.key == nullptr || std::get<0>(*s.key) != queue || std::get<1>(*s.key) != flavor ||
          std::get<2>(*s.key) != resource) {
        // A key, not a tuple of views: clang 14 (Debian 12's, the fuzz
        // build's) rejects libstdc++ 12's comparison of tuples of
        // different types.
        auto it = series.find(SeriesKey(queue, flavor, resource));
        if (it == series.end()) {
          it = series.emplace(SeriesKey(queue, flavor, resource), std::vector<SeriesPoint>(steps))
                   .first;
        }
        s = Seen{&it->first, &it->second};
      }
      return (*s.points)[step];
    };
    std::size_t n = 0;
    for (const auto& [key, totals] : bucket.reserved) {
      if (args.clusterQueue && key.clusterQueue != *args.clusterQueue) continue;
      SeriesPoint& p = pointOf(seenReserved, n++, key.clusterQueue, key.flavor, key.resource);
      p.reserved += totals.reserved;
      p.admitted += totals.admitted;
      p.held += totals.held;
      p.uncharged += totals.uncharged;
    }
    n = 0;
    for (const auto& [key, integral] : bucket.quota) {
      if (args.clusterQueue && key.clusterQueue != *args.clusterQueue) continue;
      pointOf(seenQuota, n++, key.clusterQueue, key.flavor, key.resource).nominal += integral;
    }
    ++step;
  };
  bool served = false;
  if (args.useCheckpoints) {
    try {
      replay::usageSeries(ledger, boundaries, fo, add);
      served = true;
    } catch (const replay::ReplayError& e) {
      if (!e.corrupt()) throw;
      std::cerr << "warning: " << e.what() << "; reading the period from the log\n";
    }
  }
  if (!served) {
    seenReserved.clear();
    seenQuota.clear();
    series.clear();
    step = 0;
    replay::integrateUsage(ledger, boundaries, replay::UsageScope{}, fo, add);
  }
  progress.done();
  const auto coverage = replay::coverageOf(ledger, *args.from, *args.to);
  printSeries(series, boundaries, args, coverage, lastRecordTime(ledger), out);
  return kExitOk;
}

int runUsage(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  if (args.stepNs) return runUsageSeries(ledger, args, out);
  if (args.from || args.to) throw UsageError("usage --from/--to go with --step (or use report)");
  const auto state = stateAt(ledger, resolveSeq(ledger, args, true), args);
  // Only the ClusterQueue rows are printed: no digest.
  auto report = replay::buildReport(state, {.digest = false});
  if (args.clusterQueue) {
    std::erase_if(report.clusterQueues, [&](const replay::ClusterQueueReport& q) {
      return q.name != *args.clusterQueue;
    });
    if (report.clusterQueues.empty()) {
      throw UsageError("no ClusterQueue '" + *args.clusterQueue + "' at that moment");
    }
  }
  if (args.output == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["at"] = render::atToJson(report.seq, report.timeNs);
    j["clusterQueues"] = nlohmann::ordered_json::array();
    for (const auto& q : report.clusterQueues)
      j["clusterQueues"].push_back(render::clusterQueueToJson(q));
    out << j.dump(2) << "\n";
  } else {
    out << render::clusterQueuesToTable(report.clusterQueues);
  }
  return kExitOk;
}

std::pair<std::string, std::string> splitTarget(const std::string& target) {
  const auto slash = target.find('/');
  if (target.empty() || slash == std::string::npos || slash == 0 || slash + 1 == target.size()) {
    throw UsageError("give the workload as NAMESPACE/NAME, not '" + target + "'");
  }
  return {target.substr(0, slash), target.substr(slash + 1)};
}

nlohmann::ordered_json resourcesJson(const replay::ResourceList& list) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, q] : list) j[name] = q.toString();
  return j;
}

int runWorkload(const Ledger& ledger, const QueryArgs& args, std::ostream& out) {
  auto [ns, name] = splitTarget(args.target);
  ProgressBar progress("workload");
  const auto history =
      replay::workloadHistory(ledger, ns, name, args.from, args.to, progress.callback());
  progress.done();
  if (!history.indexed) {
    std::cerr << "note: this ledger's object index does not cover every record, so the whole log "
                 "was read; `ledger-replay rebuild-projection` indexes it\n";
  }
  if (!history.found)
    throw UsageError("workload " + args.target + " does not appear in the ledger");
  if (args.output == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["workload"] = args.target;
    j["changes"] = nlohmann::ordered_json::array();
    for (const auto& e : history.entries) {
      j["changes"].push_back({{"seq", e.seq},
                              {"time", formatRfc3339(e.timeNs)},
                              {"event", e.event},
                              {"state", e.state},
                              {"clusterQueue", e.clusterQueue},
                              {"recorded", resourcesJson(e.recorded)},
                              {"usage", resourcesJson(e.usage)},
                              {"detail", e.detail}});
    }
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  const auto join = [](const replay::ResourceList& list) {
    std::string s;
    for (const auto& [r, q] : list) s += (s.empty() ? "" : ",") + r + "=" + q.toString();
    return s.empty() ? std::string("-") : s;
  };
  for (const auto& e : history.entries) {
    rows.push_back({formatRfc3339(e.timeNs), std::to_string(e.seq), e.event, e.state,
                    e.clusterQueue.empty() ? "-" : e.clusterQueue, join(e.recorded), join(e.usage),
                    e.detail.empty() ? "-" : e.detail});
  }
  out << render::renderTable(
      {"TIME", "SEQ", "EVENT", "STATE", "CLUSTERQUEUE", "RECORDED", "USAGE", "DETAIL"}, rows);
  return kExitOk;
}

}  // namespace

// A moment the ledger can answer for: not before its first record (it saw
// nothing then; an empty state would say the cluster was empty). A moment in
// a gap is answered with a warning.
void checkMoment(const Ledger& ledger, std::int64_t atNs) {
  const auto coverage = replay::coverageOf(ledger, atNs, replay::momentEnd(atNs));
  if (coverage.empty) {
    throw UsageError("the ledger holds no record: it observed nothing at " + formatRfc3339(atNs));
  }
  if (atNs < coverage.observedFromNs) {
    throw UsageError(formatRfc3339(atNs) + " is before the ledger's first record (" +
                     formatRfc3339(coverage.observedFromNs) + "): it observed nothing then");
  }
  if (const std::string w = render::momentWarning(coverage, atNs); !w.empty()) {
    std::cerr << "warning: " << w << "\n";
  }
}

std::optional<Verification> proofFor(const Ledger& ledger, FailedVerification policy) {
  std::optional<Verification> proof;
  if (Status st = readVerification(ledger.directory(), &proof); !st.isOk()) {
    if (policy == FailedVerification::kRefuse) {
      throw ProgramError("cannot state what was last proven of this ledger: " + st.message() +
                             "; or pass --ignore-failed-verify to answer anyway",
                         kExitCorrupt);
    }
    if (policy == FailedVerification::kWarn) std::cerr << "warning: " << st.message() << "\n";
    return std::nullopt;
  }
  if (!proof || proof->ok) return proof;
  // The log is what verification derives everything else from: a broken
  // chain is not mended by rebuilding, a derived family is.
  const std::string fix =
      proof->scope == VerificationScope::kChain
          ? "the log itself fails its hash chain; `ledger-replay verify` names what is wrong"
          : "rebuild what is derived from the log (`ledger-replay rebuild-projection`, "
            "`ledger-replay checkpoint --rewrite`) and run `ledger-replay verify` again";
  const std::string what = "answers may rest on edited data: " + render::proofLine(proof);
  if (policy == FailedVerification::kRefuse) {
    throw ProgramError(what + "; " + fix + ", or pass --ignore-failed-verify to answer anyway",
                       kExitCorrupt);
  }
  if (policy == FailedVerification::kWarn) std::cerr << "WARNING: " << what << "\n";
  return proof;
}

int answerWithProof(const Ledger& ledger, OutputFormat output, FailedVerification policy,
                    std::ostream& out, const std::function<int(std::ostream&)>& answer) {
  // Read before the answer is computed: a refusal costs no fold, and a
  // verification that ends meanwhile is stated by the next answer.
  const std::optional<Verification> proof = proofFor(ledger, policy);
  // Written as it is made: a series or an export runs to megabytes, which
  // held and copied cost more than computing them. The answers compute
  // before they print, so a failure leaves stdout empty.
  if (output == OutputFormat::kJson) {
    render::ProofInserter inserter(out, proof);
    std::ostream text(&inserter);
    const int code = answer(text);
    inserter.finish();
    return code;
  }
  const int code = answer(out);
  if (output == OutputFormat::kCsv) {
    std::cerr << render::proofLine(proof) << "\n";
  } else {
    out << render::proofLine(proof) << "\n";
  }
  return code;
}

int runQuery(const Ledger& ledger, const std::string& command, const QueryArgs& args,
             std::ostream& out) {
  if (command != "state" && command != "usage" && command != "workload" && command != "report" &&
      command != "admit" && command != "waits" && command != "why" && command != "findings") {
    throw UsageError("unknown command '" + command + "'");
  }
  warnIfOlderProjections(ledger);
  return answerWithProof(ledger, args.output, args.failedVerification, out,
                         [&](std::ostream& answer) {
                           if (command == "state") return runState(ledger, args, answer);
                           if (command == "usage") return runUsage(ledger, args, answer);
                           if (command == "workload") return runWorkload(ledger, args, answer);
                           if (command == "report") return runReport(ledger, args, answer);
                           if (command == "waits") return runWaits(ledger, args, answer);
                           if (command == "why") return runWhy(ledger, args, answer);
                           if (command == "findings") {
                             return runFindingsTimeline(ledger, args, answer);
                           }
                           return runAdmit(ledger, args, answer);
                         });
}

}  // namespace ledger::cli
