#include "replay/kueue/usage_report.h"

#include <capnp/serialize.h>

#include <algorithm>
#include <set>

#include "replay/fold/scan_ahead.h"
#include "replay/kueue/workload_usage.h"

namespace ledger::replay {

namespace {

constexpr std::int64_t kBillion = 1000000000;

Int256 pow10(int digits) {
  Int256 pow = 1;
  for (int i = 0; i < digits; ++i) pow *= 10;
  return pow;
}

// value / scale with `digits` decimals, rounded half away from zero; scale > 0.
std::string decimal(Int256 value, const Int256& scale, int digits) {
  const bool negative = value < 0;
  if (negative) value = -value;
  const Int256 pow = pow10(digits);
  const Int256 scaled = (value * pow + scale / 2) / scale;
  // Appended, not `"-" + text`: GCC 12 warns (-Wrestrict, a false positive)
  // on that operator+ when optimising.
  std::string out;
  if (negative) out.push_back('-');
  out += Int256(scaled / pow).str();
  if (digits > 0) {
    std::string f = Int256(scaled % pow).str();
    f.insert(f.begin(), static_cast<std::size_t>(digits) - f.size(), '0');
    out += "." + f;
  }
  return out;
}

// The usage one workload contributes and to which groups.
struct Contribution {
  std::string clusterQueue;
  std::string group;
  std::map<std::string, Quantity> byResource;  // summed over flavors
};

std::optional<Contribution> contributionOf(std::string_view ns, std::string_view name,
                                           schema::Workload::Reader wl, GroupBy by) {
  if (!wl.getHasAdmission() || !conditionsOf(wl).reserving()) return std::nullopt;
  Contribution c;
  c.clusterQueue = wl.getAdmissionClusterQueue().cStr();
  c.group = by == GroupBy::kClusterQueue ? c.clusterQueue
            : by == GroupBy::kNamespace  ? std::string(ns)
                                         : ClusterState::key(ns, name);
  for (const auto& [fr, q] : admissionUsage(wl, nullptr)) c.byResource[fr.second] += q;
  return c;
}

std::map<std::string, Quantity> nominalOf(schema::ClusterQueue::Reader cq) {
  std::map<std::string, Quantity> out;
  for (auto rg : cq.getResourceGroups()) {
    for (auto f : rg.getFlavors()) {
      for (auto r : f.getResources()) {
        out[r.getName().cStr()] +=
            Quantity::tryParse(r.getNominalQuota().cStr()).value_or(Quantity());
      }
    }
  }
  return out;
}

// A level that changes at instants, integrated lazily.
struct Level {
  Quantity value;
  std::int64_t since = 0;
  Integral integral;
  void set(const Quantity& v, std::int64_t t) {
    integral.add(value, t - since);
    value = v;
    since = t;
  }
};

class PeriodBuilder {
 public:
  PeriodBuilder(UsagePeriod& out, const std::optional<std::string>& cq, ChartSteps steps)
      : out_(out), only_(cq), steps_(steps == ChartSteps::kKeep) {}

  bool wanted(const std::string& cq) const { return !only_ || *only_ == cq; }

  void setWorkload(const std::string& key, std::optional<Contribution> c, std::int64_t t) {
    if (c && !wanted(c->clusterQueue)) c.reset();
    auto it = workloads_.find(key);
    if (it != workloads_.end()) {
      apply(it->second, t, -1);
      workloads_.erase(it);
    }
    if (c) {
      apply(*c, t, +1);
      workloads_.emplace(key, std::move(*c));
    }
  }

  void setQueue(const std::string& cq, const std::map<std::string, Quantity>& nominal,
                std::int64_t t) {
    if (!wanted(cq)) return;
    std::set<std::string> resources;
    for (const auto& [r, q] : nominal) resources.insert(r);
    for (const auto& [k, level] : quota_) {
      if (k.first == cq) resources.insert(k.second);
    }
    for (const auto& r : resources) {
      auto it = nominal.find(r);
      Level& level = quota_[{cq, r}];
      const Quantity v = it == nominal.end() ? Quantity() : it->second;
      if (level.value == v && level.since != 0) continue;
      if (level.since == 0) level.since = t;
      level.set(v, t);
      if (steps_) out_.nominalSteps[{cq, r}].push_back(StepPoint{t, v});
    }
  }

  void finish(std::int64_t t) {
    for (auto& [k, level] : reserved_) level.set(level.value, t);
    for (auto& [k, level] : quota_) level.set(level.value, t);
    std::map<std::pair<std::string, std::string>, UsageRow> rows;
    for (auto& [k, level] : reserved_) {
      UsageRow& row = rows[k];
      row.group = k.first;
      row.resource = k.second;
      row.reserved = level.integral;
    }
    if (out_.by == GroupBy::kClusterQueue) {
      for (auto& [k, level] : quota_) {
        UsageRow& row = rows[k];
        row.group = k.first;
        row.resource = k.second;
        row.quota = level.integral;
      }
    }
    for (auto& [k, row] : rows) out_.rows.push_back(std::move(row));
  }

  void start(std::int64_t t) { start_ = t; }

 private:
  void apply(const Contribution& c, std::int64_t t, int sign) {
    for (const auto& [r, q] : c.byResource) {
      Level& level = reserved_[{c.group, r}];
      if (level.since == 0) level.since = start_;
      level.set(sign > 0 ? level.value + q : level.value - q, t);
      Quantity& perQueue = queueLevels_[{c.clusterQueue, r}];
      perQueue = sign > 0 ? perQueue + q : perQueue - q;
      if (!steps_) continue;
      auto& steps = out_.reservedSteps[{c.clusterQueue, r}];
      if (!steps.empty() && steps.back().timeNs == t) {
        steps.back().value = perQueue;
      } else {
        steps.push_back(StepPoint{t, perQueue});
      }
    }
  }

  UsagePeriod& out_;
  std::optional<std::string> only_;
  bool steps_;
  std::int64_t start_ = 0;
  std::map<std::string, Contribution> workloads_;
  std::map<std::pair<std::string, std::string>, Level> reserved_;
  std::map<std::pair<std::string, std::string>, Level> quota_;
  std::map<std::pair<std::string, std::string>, Quantity> queueLevels_;
};

}  // namespace

void Integral::add(const Quantity& level, std::int64_t durationNs) {
  if (durationNs <= 0 || level.isZero()) return;
  const Int256 nanos = level.nanos();
  whole_ += nanos * (durationNs / kBillion);
  fraction_ += nanos * (durationNs % kBillion);  // < 1e9 x level: carried below
  whole_ += fraction_ / kBillion;
  fraction_ %= kBillion;
}

std::string Integral::seconds() const {
  // nano-unit-seconds -> resource-seconds, exact to the nano-unit.
  return decimal(whole_, kBillion, 9);
}

std::string Integral::hours(Int128 divisor) const {
  return decimal(whole_, Int256(kBillion * 3600) * Int256(divisor), 6);
}

std::string utilisation(const Integral& reserved, const Integral& quota) {
  if (quota.nanoUnitSeconds() == 0) return "";
  // Basis points, truncated toward zero; the sign printed once, so a
  // negative value never shows a negative fraction.
  Int256 bp = reserved.nanoUnitSeconds() * 10000 / quota.nanoUnitSeconds();
  std::string out;
  if (bp < 0) {
    out.push_back('-');
    bp = -bp;
  }
  std::string cents = Int256(bp % 100).str();
  if (cents.size() < 2) cents.insert(cents.begin(), '0');
  out += Int256(bp / 100).str();
  out += "." + cents + "%";
  return out;
}

bool isByteResource(const std::string& r) {
  return r == "memory" || r == "ephemeral-storage" || r.rfind("hugepages-", 0) == 0 ||
         (r.size() > 7 && r.compare(r.size() - 7, 7, ".memory") == 0);
}

UsagePeriod computeUsagePeriod(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                               GroupBy by, const std::optional<std::string>& clusterQueue,
                               const FoldOptions& options, ChartSteps steps) {
  if (toNs < fromNs) throw ReplayError("--to is before --from");
  Replayer replayer(ledger);
  UsagePeriod out;
  out.fromNs = fromNs;
  out.toNs = toNs;
  out.by = by;
  out.fromSeq = replayer.seqAt(fromNs);
  out.toSeq = replayer.seqAt(toNs);
  ClusterState state = replayer.foldTo(out.fromSeq, options);
  PeriodBuilder builder(out, clusterQueue, steps);
  builder.start(fromNs);
  for (const auto& [key, obj] : state.objects(ObjectKind::kClusterQueue)) {
    builder.setQueue(std::string(obj->name()),
                     nominalOf(obj->projection().getBody().getClusterQueue()), fromNs);
  }
  for (const auto& [key, obj] : state.objects(ObjectKind::kWorkload)) {
    builder.setWorkload(
        key, contributionOf(obj->ns(), obj->name(), obj->projection().getBody().getWorkload(), by),
        fromNs);
  }
  if (out.toSeq > out.fromSeq) {
    // The period itself: as long as a replay of it, so it reports progress
    // too (after the fold to `from`, which reported its own).
    const std::uint64_t total = out.toSeq - out.fromSeq;
    std::uint64_t done = 0;
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = 1ULL << 30;
    auto visit = [&](std::uint64_t, kj::ArrayPtr<const capnp::word> words) {
      if (options.progress && (++done & 0xFFFF) == 0) options.progress(done, total);
      capnp::FlatArrayMessageReader reader(words, limits);
      auto r = reader.getRoot<schema::ProjectedRecord>();
      const std::int64_t t = std::max(r.getTimeNs(), fromNs);
      auto body = r.getObject().getBody();
      auto id = r.getIdentity();
      const bool deleted = r.getType() == schema::EventType::DELETED;
      if (body.isWorkload()) {
        const std::string ns = id.getNamespace().cStr();
        const std::string name = id.getName().cStr();
        builder.setWorkload(
            ClusterState::key(ns, name),
            deleted ? std::nullopt : contributionOf(ns, name, body.getWorkload(), by), t);
      } else if (body.isClusterQueue()) {
        builder.setQueue(
            id.getName().cStr(),
            deleted ? std::map<std::string, Quantity>{} : nominalOf(body.getClusterQueue()), t);
      }
      return true;
    };
    // Reading the records and charging them cost about the same: a long
    // period reads on the other core, as a long replay does.
    Status st = scanProjectionAheadIfLong(ledger, out.fromSeq + 1, out.toSeq, visit);
    if (!st.isOk()) throw ReplayError(st);
    if (options.progress) options.progress(total, total);
  }
  builder.finish(toNs);
  return out;
}

}  // namespace ledger::replay
