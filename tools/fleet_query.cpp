#include "tools/fleet_query.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/head_signature.h"
#include "ingest/fleet/shipped_record.h"
#include "replay/fold/observations.h"
#include "replay/kueue/usage_report.h"
#include "schema/k8s/rfc3339.h"
#include "tools/cli.h"
#include "tools/progress.h"
#include "tools/render/coverage_format.h"
#include "tools/render/report_format.h"
#include "tools/render/usage_report_format.h"
#include "tools/report_command.h"

namespace ledger::cli {

std::optional<CopySignature> copySignatureOf(const Ledger& copy) {
  Cursor c;
  Status st = copy.cursor(fleet::kHeadSignatureCursor, &c);
  if (st.code() == Status::Code::kNotFound) return std::nullopt;
  if (!st.isOk()) throw ProgramError(st.toString(), exitCodeFor(st));
  return CopySignature{c.position, c.resourceVersion};
}

int runFleetVerify(const std::string& dir, const std::optional<std::string>& trustedKeys, bool json,
                   std::ostream& out,
                   const std::function<int(const Ledger&, std::ostream&)>& verifyLog) {
  std::optional<fleet::TrustedKeys> keys;
  if (trustedKeys) {
    try {
      keys.emplace(*trustedKeys);
    } catch (const fleet::FleetError& e) {
      throw UsageError(std::string("--trusted-keys: ") + e.what());
    }
  }
  return *forEachFleetCopy(dir, json, out, [&](const Ledger& copy, std::ostream& answer) {
    std::ostringstream log;
    int code = verifyLog(copy, log);
    const std::string cluster = std::filesystem::path(copy.directory()).filename().string();
    const auto signature = copySignatureOf(copy);
    std::string state = signature ? "not checked" : "unsigned";
    if (keys && signature) {
      const auto sig = fleet::signatureFromText(signature->text);
      const bool ok = sig && signature->seq == copy.lastSeq() &&
                      keys->verify(cluster, copy.lastSeq(), copy.lastHash(), *sig);
      state = ok ? "verified" : (keys->knows(cluster) ? "bad" : "no trusted key");
    }
    if (keys && state != "verified") code = std::max(code, static_cast<int>(kExitCorrupt));
    if (json) {
      auto j = nlohmann::ordered_json::parse(log.str(), nullptr, false);
      if (!j.is_object()) j = nlohmann::ordered_json{{"answer", log.str()}};
      j["headSignature"] = state;
      if (keys && state != "verified") j["ok"] = false;
      answer << j.dump() << "\n";
    } else {
      answer << log.str() << "head signature: " << state
             << (signature ? " (seq " + std::to_string(signature->seq) + ")" : std::string())
             << "\n";
    }
    return std::optional<int>(code);
  });
}

std::vector<std::pair<std::string, std::string>> fleetClusters(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError("--fleet " + dir + " is not a directory");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && fleet::isClusterName(name) &&
        std::filesystem::exists(entry.path() / "CURRENT")) {
      out.emplace_back(name, entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<int> forEachFleetCopy(
    const std::string& dir, bool json, std::ostream& out,
    const std::function<std::optional<int>(const Ledger&, std::ostream&)>& each) {
  int worst = kExitOk;
  std::size_t answered = 0, leftOut = 0;
  nlohmann::ordered_json all;
  all["clusters"] = nlohmann::ordered_json::array();
  std::ostringstream tables;
  for (const auto& [cluster, path] : fleetClusters(dir)) {
    std::unique_ptr<Ledger> copy = openForReading(path);
    std::ostringstream answer;
    const std::optional<int> code = each(*copy, answer);
    if (!code) {
      ++leftOut;
      continue;
    }
    ++answered;
    worst = std::max(worst, *code);
    const bool isSigned = copySignatureOf(*copy).has_value();
    if (json) {
      nlohmann::ordered_json entry;
      entry["cluster"] = cluster;
      entry["signed"] = isSigned;
      auto parsed = nlohmann::ordered_json::parse(answer.str(), nullptr, false);
      if (parsed.is_object()) {
        for (auto& [k, v] : parsed.items()) entry[k] = v;
      } else {
        entry["answer"] = answer.str();
      }
      all["clusters"].push_back(entry);
    } else {
      tables << "== cluster " << cluster << (isSigned ? "" : " (unsigned)") << " ==\n"
             << answer.str();
    }
  }
  if (answered == 0 && leftOut > 0) return std::nullopt;
  if (json) {
    out << all.dump(2) << "\n";
  } else {
    out << tables.str();
  }
  return worst;
}

namespace {

// Each warning line of `text` names the cluster it is about.
std::string prefixed(const std::string& cluster, const std::string& text) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = text.substr(start, nl - start);
    if (line.rfind("warning: ", 0) == 0) line.insert(9, "cluster " + cluster + ": ");
    out += line + "\n";
  }
  return out;
}

// Each cluster's rows keyed by (cluster, group values, resource), summed
// exactly: with --by cluster, its ClusterQueue rows per resource.
using FleetRows =
    std::map<std::tuple<std::string, std::vector<std::string>, std::string>, replay::UsageRow>;

void addClusterRows(const std::string& cluster, const replay::UsagePeriod& period, bool byCluster,
                    FleetRows* rows) {
  for (const auto& r : period.rows) {
    std::vector<std::string> keys{cluster};
    if (!byCluster) keys.insert(keys.end(), r.groupValues.begin(), r.groupValues.end());
    replay::UsageRow& row =
        (*rows)[{cluster, byCluster ? std::vector<std::string>{} : r.groupValues, r.resource}];
    if (row.resource.empty()) {
      row.groupValues = std::move(keys);
      row.resource = r.resource;
    }
    row.addIntegrals(r);
  }
}

int runFleetReport(const std::string& dir, const QueryArgs& args, std::ostream& out) {
  if (!args.from || !args.to) throw UsageError("report needs --from TIME and --to TIME");
  if (*args.to < *args.from) throw UsageError("--to is before --from");
  const bool byCluster = args.by == "cluster";
  replay::Grouping by;
  try {
    if (!byCluster) by = groupingArg(args.by);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + "; with --fleet also cluster");
  }
  FleetRows rows;
  // What each cluster's ledger saw of the period: its gaps came with its
  // records (Snapshot objects, replay/fold/observations.h).
  std::map<std::string, replay::Coverage> coverage;
  std::int64_t fromNs = *args.from, toNs = *args.to;
  std::vector<std::string> unsignedCopies;
  for (const auto& [cluster, path] : fleetClusters(dir)) {
    std::unique_ptr<Ledger> copy = openForReading(path);
    warnIfOlderProjections(*copy);
    if (!copySignatureOf(*copy)) unsignedCopies.push_back(cluster);
    replay::FoldOptions fo;
    fo.useCheckpoints = args.useCheckpoints;
    fo.onBadCheckpoint = warnBadCheckpoint;
    const auto period = replay::computeUsagePeriod(
        *copy, *args.from, *args.to, by, args.clusterQueue, fo, replay::ChartSteps::kOmit,
        args.useCheckpoints ? replay::UsageSource::kRollupsWhereStored : replay::UsageSource::kLog);
    fromNs = period.fromNs;
    toNs = period.toNs;
    coverage[cluster] = replay::coverageOf(*copy, period.fromNs, period.toNs);
    addClusterRows(cluster, period, byCluster, &rows);
  }
  std::vector<replay::UsageRow> all;
  for (auto& [key, row] : rows) all.push_back(std::move(row));
  const auto totals = replay::usageTotals(all);
  std::vector<render::KeyColumn> keys{{"CLUSTER", "cluster", "cluster", ""}};
  if (!byCluster) {
    for (auto& k : render::keyColumns(by)) keys.push_back(std::move(k));
  }
  const auto lines = render::reportLines(all);
  if (args.output == OutputFormat::kJson) {
    nlohmann::ordered_json j;
    j["from"] = formatRfc3339(fromNs);
    j["to"] = formatRfc3339(toNs);
    j["by"] = byCluster ? args.by : by.text();
    j["unsignedClusters"] = unsignedCopies;
    j["coverage"] = nlohmann::ordered_json::object();
    for (const auto& [cluster, c] : coverage) j["coverage"][cluster] = render::coverageToJson(c);
    j["rows"] = nlohmann::ordered_json::array();
    for (const auto& line : lines) j["rows"].push_back(render::reportRowJson(keys, line));
    j["totals"] = render::totalsJson(totals);
    out << j.dump(2) << "\n";
  } else if (args.output == OutputFormat::kCsv) {
    for (const auto& [cluster, c] : coverage) {
      std::cerr << prefixed(cluster, render::coverageWarnings(c, fromNs));
    }
    out << render::reportCsv(keys, lines, totals);
  } else {
    out << "Usage from " << formatRfc3339(fromNs) << " to " << formatRfc3339(toNs) << " by "
        << (byCluster ? args.by : by.text()) << " across the fleet\n";
    for (const auto& [cluster, c] : coverage)
      out << prefixed(cluster, render::coverageWarnings(c, fromNs));
    out << render::reportTable(keys, lines, totals);
    if (!unsignedCopies.empty()) {
      out << "unsigned copies (no cluster signature):";
      for (const std::string& c : unsignedCopies) out << " " << c;
      out << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

LedgerEnd fleetLastRecordEnd(const std::string& dir) {
  return [dir] {
    std::optional<std::int64_t> latest;
    for (const auto& [cluster, path] : fleetClusters(dir)) {
      const auto t = lastRecordTime(*openForReading(path));
      if (t && (!latest || *t > *latest)) latest = t;
    }
    if (!latest) throw UsageError("'end' is the fleet's last record, and no copy holds one");
    return *latest;
  };
}

int runFleetQuery(const std::string& dir, const std::string& command, const QueryArgs& args,
                  std::ostream& out) {
  if (command == "report") return runFleetReport(dir, args, out);
  if (command != "state" && command != "usage" && command != "workload") {
    throw UsageError("ledger-query --fleet answers state, usage, workload and report, not '" +
                     command + "'");
  }
  if (command == "workload") {
    // A workload lives in the clusters that saw it: the others are left out,
    // and one that no cluster saw is an error, as on one ledger.
    const auto code =
        forEachFleetCopy(dir, args.output == OutputFormat::kJson, out,
                         [&](const Ledger& copy, std::ostream& answer) -> std::optional<int> {
                           try {
                             return runQuery(copy, command, args, answer);
                           } catch (const UsageError&) {
                             return std::nullopt;  // not in this cluster's history
                           }
                         });
    if (!code) throw UsageError("workload " + args.target + " appears in no cluster of the fleet");
    return *code;
  }
  return *forEachFleetCopy(dir, args.output == OutputFormat::kJson, out,
                           [&](const Ledger& copy, std::ostream& answer) {
                             return runQuery(copy, command, args, answer);
                           });
}

}  // namespace ledger::cli
