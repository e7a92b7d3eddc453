#include "replay/admission/shortfall_reason.h"

#include <algorithm>
#include <vector>

namespace ledger::replay::admission {

namespace {

class Explainer {
 public:
  Explainer(const QuotaView& q, const std::string& cq, const QuotaCheck& c,
            const std::set<std::string>& binary)
      : q_(q), cq_(cq), c_(c), fr_{c.flavor, c.resource}, binary_(binary) {}

  std::string fmt(Int128 v) const { return formatKueue(c_.resource, v, binary_); }

  // Why the cohort tree lends no more: the queue's own borrowingLimit, then
  // every other member that keeps (lendingLimit) or uses its quota.
  std::vector<std::string> limits() const {
    std::vector<std::string> facts;
    if (const ResourceLimits* l = q_.tree().limits(cq_, false, fr_); l && l->borrowingLimit) {
      facts.push_back(cq_ + "'s borrowingLimit is " +
                      fmt(kueueUnits(c_.resource, *l->borrowingLimit)));
    }
    bool anyQuota = false;
    walk(q_.rootOf(cq_, false), true, facts, anyQuota);
    if (!anyQuota) {
      facts.push_back("no other member of the cohort has " + c_.resource + " quota in flavor " +
                      c_.flavor);
    }
    return facts;
  }

  void walk(const std::string& node, bool isCohort, std::vector<std::string>& facts,
            bool& anyQuota) const {
    if (!isCohort && node == cq_) return;
    const ResourceLimits* l = q_.tree().limits(node, isCohort, fr_);
    const std::string who = isCohort ? "cohort " + node : node;
    const Int128 nominal = l ? kueueUnits(c_.resource, l->nominal) : 0;
    if (nominal > 0) anyQuota = true;
    if (l && l->lendingLimit) {
      facts.push_back(who + "'s lendingLimit is " + fmt(kueueUnits(c_.resource, *l->lendingLimit)));
    }
    if (isCohort) {
      if (l && l->borrowingLimit && q_.tree().parentOf(node, true) != "") {
        facts.push_back(who + "'s borrowingLimit is " +
                        fmt(kueueUnits(c_.resource, *l->borrowingLimit)));
      }
      for (const auto& [child, childIsCohort] : q_.tree().children(node)) {
        walk(child, childIsCohort, facts, anyQuota);
      }
      return;
    }
    const Int128 used = q_.usage(node, false, fr_);
    if (used > nominal) {
      facts.push_back(node + " borrows " + fmt(used - nominal) + " (uses " + fmt(used) +
                      ", nominal quota " + fmt(nominal) + ")");
    } else if (used > 0 && !(l && l->lendingLimit)) {
      facts.push_back(node + " uses " + fmt(used) + " of its nominal quota " + fmt(nominal));
    }
  }

  std::string explain() const {
    const Int128 val = c_.value();
    const Int128 nominal = q_.nominal(cq_, fr_);
    const Int128 used = q_.usage(cq_, false, fr_);
    std::string out = "cluster-queue " + cq_ + " needs " + fmt(val - c_.available) + " more " +
                      c_.resource + " in flavor " + c_.flavor + " (requests " + fmt(c_.request);
    if (c_.assumed > 0) out += ", plus " + fmt(c_.assumed) + " for earlier pod sets";
    out += "; nominal quota " + fmt(nominal) + ", " + fmt(used) + " in use)";
    const std::string parent = q_.parentOf(cq_, false);
    if (parent.empty()) {
      out += "; it is in no cohort, so it cannot borrow";
    } else {
      const Int128 own = std::max<Int128>(0, nominal - used);
      const Int128 lend = std::max<Int128>(0, c_.available - own);
      out += "; its cohort " + parent + " can lend " + fmt(lend);
      const auto facts = limits();
      for (std::size_t i = 0; i < facts.size(); ++i) {
        out += (i == 0 ? " because " : ", ") + facts[i];
      }
    }
    if (val > c_.potentialAvailable) {
      out += "; it can never hold more than " + fmt(c_.potentialAvailable) +
             " (maximum capacity), so waiting will not help";
    } else if (c_.mode != PreemptionMode::kNoFit && c_.mode != PreemptionMode::kFit) {
      out += "; Kueue would consider preemption";
    }
    return out;
  }

 private:
  const QuotaView& q_;
  const std::string& cq_;
  const QuotaCheck& c_;
  FlavorResource fr_;
  const std::set<std::string>& binary_;
};

}  // namespace

std::string explainShortfall(const QuotaView& quota, const std::string& clusterQueue,
                             const QuotaCheck& check, const std::set<std::string>& binary) {
  return Explainer(quota, clusterQueue, check, binary).explain();
}

Int128 borrowedAmount(const QuotaView& quota, const std::string& clusterQueue,
                      const QuotaCheck& check) {
  const FlavorResource fr{check.flavor, check.resource};
  const Int128 nominal = quota.nominal(clusterQueue, fr);
  const Int128 used = quota.usage(clusterQueue, false, fr);
  const Int128 before = std::max<Int128>(0, used + check.assumed - nominal);
  const Int128 after = std::max<Int128>(0, used + check.value() - nominal);
  return after - before;
}

}  // namespace ledger::replay::admission
