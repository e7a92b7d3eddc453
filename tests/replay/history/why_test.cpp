// ledger-query why on hand-made clusters: a workload pending behind a
// borrowing neighbour (its reason and who held the quota), and evictions
// checked against the preempting ClusterQueue's spec.preemption. The
// preemption cases follow Kueue's own (pkg/scheduler/preemption
// preemption_test.go TestPreemption, its defaultClusterQueues): where Kueue
// preempts, the recorded eviction conforms; where Kueue would not, an
// eviction recorded anyway does not, and raises UnexpectedPreemption.
#include "replay/history/why.h"

#include "replay/history/preemption_check.h"
#include "schema/k8s/rfc3339.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace why_test {

using Json = nlohmann::json;

// Events in the order written, one second apart from 2026-11-01T00:00:00Z,
// each with its own resourceVersion.
class Cluster {
 public:
  Cluster() {
    add("ADDED", k8s::resourceFlavor("default"));
    add("ADDED", {{"apiVersion", "v1"},
                  {"kind", "Namespace"},
                  {"metadata", k8s::metadata("", "t", "1")},
                  {"status", {{"phase", "Active"}}}});
  }
  // A ClusterQueue with `cpu` nominal (and a borrowing limit), its
  // spec.preemption, and a LocalQueue t/lq-NAME pointing at it.
  void queue(const std::string& name, const std::string& cohort, const std::string& cpu,
             const Json& preemption, Json borrowingLimit = nullptr) {
    Json cq = k8s::clusterQueue(name, "v1beta2", cohort,
                                {{"default", {{"cpu", cpu, std::move(borrowingLimit)}}}});
    if (!preemption.is_null()) cq["spec"]["preemption"] = preemption;
    add("ADDED", cq);
    add("ADDED", k8s::localQueue("t", "lq-" + name, name));
  }
  std::string add(const std::string& type, Json object) {
    object["metadata"]["resourceVersion"] = std::to_string(++rv_);
    const std::string time = "2026-11-01T00:" + two(seconds_ / 60) + ":" + two(seconds_ % 60) + "Z";
    ++seconds_;
    text_ += event(type, object, time);
    return time;
  }
  const std::string& text() const { return text_; }

 private:
  static std::string two(int n) { return (n < 10 ? "0" : "") + std::to_string(n); }
  std::string text_;
  int rv_ = 100;
  int seconds_ = 0;
};

Json workload(const std::string& name, const std::string& cq, int priority,
              const std::string& cpu) {
  Json wl = k8s::workload(
      "t", name, "lq-" + cq,
      Json::array({k8s::podSet(
          "main", 1, {{"containers", Json::array({k8s::container("c", {{"cpu", cpu}})})}})}));
  wl["spec"]["priority"] = priority;
  return wl;
}

Json reserved(const std::string& name, const std::string& cq, int priority,
              const std::string& cpu) {
  return k8s::admitted(workload(name, cq, priority, cpu), cq, "default", {{"cpu", cpu}});
}

Json condition(const std::string& type, const std::string& status, const std::string& reason,
               const std::string& message) {
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", "2026-11-01T00:00:00Z"}};
}

// Kueue's eviction by preemption (pkg/scheduler/preemption preemptionMessage).
Json evicted(Json wl, const std::string& preemptor, const std::string& kueueReason) {
  const std::string message = "Preempted to accommodate a workload (UID: uid-t-" + preemptor +
                              ", JobUID: UNKNOWN) due to prioritization in the ClusterQueue";
  wl["status"]["conditions"].push_back(condition("Evicted", "True", "Preempted", message));
  wl["status"]["conditions"].push_back(condition("Preempted", "True", kueueReason, message));
  return wl;
}

Json requeued(Json wl) {
  wl["status"].erase("admission");
  wl["status"]["conditions"] =
      Json::array({condition("QuotaReserved", "False", "Pending", "evicted and requeued"),
                   condition("Evicted", "True", "Preempted", "")});
  return wl;
}

// The victim admitted, then the preemptor created; the eviction of the
// victim recorded; the preemptor admitted with `cpu`.
void preempt(Cluster& c, const std::string& victim, const std::string& victimCq, int victimPriority,
             const std::string& victimCpu, const std::string& preemptor, const std::string& cq,
             int priority, const std::string& cpu, const std::string& kueueReason) {
  c.add("ADDED", workload(preemptor, cq, priority, cpu));
  const Json v = reserved(victim, victimCq, victimPriority, victimCpu);
  c.add("MODIFIED", evicted(v, preemptor, kueueReason));
  c.add("MODIFIED", requeued(v));
  c.add("MODIFIED", reserved(preemptor, cq, priority, cpu));
}

replay::history::WhyReport why(const Cluster& c, const std::string& name) {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  REQUIRE(ingestText(*ledger, c.text()).rejected == 0);
  return replay::history::explainWorkload(*ledger, "t", name, std::nullopt, std::nullopt);
}

const Json kStandalone = {{"withinClusterQueue", "LowerPriority"}};
const Json kC1 = {{"withinClusterQueue", "LowerPriority"},
                  {"reclaimWithinCohort", "LowerPriority"}};
const Json kC2 = {{"withinClusterQueue", "Never"}, {"reclaimWithinCohort", "Any"}};
const Json kWithThreshold = {
    {"withinClusterQueue", "Never"},
    {"reclaimWithinCohort", "LowerPriority"},
    {"borrowWithinCohort", {{"policy", "LowerPriority"}, {"maxPriorityThreshold", 0}}}};

}  // namespace why_test

using namespace why_test;

TEST_CASE("Kueue's preemption policies on priorities", "[why]") {
  using replay::history::policyAllows;
  CHECK(policyAllows("LowerPriority", 1, 0, 0, 0));
  CHECK_FALSE(policyAllows("LowerPriority", 0, 0, 0, 1));
  CHECK(policyAllows("LowerOrNewerEqualPriority", 0, 0, 5, 9));
  CHECK_FALSE(policyAllows("LowerOrNewerEqualPriority", 0, 0, 9, 5));
  CHECK(policyAllows("Any", -5, 5, 0, 0));
  CHECK_FALSE(policyAllows("Never", 5, -5, 0, 0));
  CHECK_FALSE(policyAllows("", 5, -5, 0, 0));
}

TEST_CASE("a priority preemption within a ClusterQueue conforms", "[why]") {
  // TestPreemption "preempt lowest priority".
  Cluster c;
  c.queue("standalone", "", "6", kStandalone);
  c.add("ADDED", reserved("mid", "standalone", 0, "2"));
  c.add("ADDED", reserved("high", "standalone", 1, "2"));
  c.add("ADDED", reserved("low", "standalone", -1, "2"));
  preempt(c, "low", "standalone", -1, "2", "in", "standalone", 1, "2", "InClusterQueue");
  const auto r = why(c, "low");
  REQUIRE(r.evictions.size() == 1);
  const auto& e = r.evictions[0];
  CHECK(e.preemption);
  CHECK(e.preemptor == "t/in");
  CHECK(e.preemptorFrom == "uid");
  CHECK(e.policy == "withinClusterQueue");
  CHECK(e.conforms == true);
  CHECK(r.findings.empty());
  // Admitted, then pending after the eviction.
  REQUIRE(r.intervals.size() >= 2);
  CHECK(r.intervals.back().state == "Pending");
}

TEST_CASE("an eviction withinClusterQueue does not allow raises UnexpectedPreemption", "[why]") {
  SECTION("TestPreemption \"no preemption for low priority\": equal priorities") {
    Cluster c;
    c.queue("standalone", "", "6", kStandalone);
    c.add("ADDED", reserved("mid", "standalone", 0, "3"));
    c.add("ADDED", reserved("low", "standalone", -1, "3"));
    preempt(c, "low", "standalone", -1, "3", "in", "standalone", -1, "1", "InClusterQueue");
    const auto r = why(c, "low");
    REQUIRE(r.evictions.size() == 1);
    CHECK(r.evictions[0].policy == "withinClusterQueue");
    CHECK(r.evictions[0].conforms == false);
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].type == "UnexpectedPreemption");
    CHECK(r.findings[0].object == "Workload t/low");
  }
  SECTION("withinClusterQueue: Never") {
    Cluster c;
    c.queue("never", "", "4", Json{{"withinClusterQueue", "Never"}});
    c.add("ADDED", reserved("low", "never", -1, "4"));
    preempt(c, "low", "never", -1, "4", "in", "never", 5, "4", "InClusterQueue");
    const auto r = why(c, "low");
    REQUIRE(r.evictions.size() == 1);
    CHECK(r.evictions[0].conforms == false);
    CHECK(r.evictions[0].explanation.find("Never") != std::string::npos);
    CHECK(r.findings.size() == 1);
  }
}

TEST_CASE("a reclaim within a cohort conforms only from a borrowing queue", "[why]") {
  SECTION("TestPreemption \"reclaim quota from borrower\"") {
    Cluster c;
    c.queue("c1", "cohort", "6", kC1, "6");
    c.queue("c2", "cohort", "6", kC2, "6");
    c.add("ADDED", reserved("c1-low", "c1", -1, "3"));
    c.add("ADDED", reserved("c2-high", "c2", 1, "6"));
    c.add("ADDED", reserved("c2-mid", "c2", 0, "3"));
    preempt(c, "c2-mid", "c2", 0, "3", "in", "c1", 1, "3", "InCohortReclamation");
    const auto r = why(c, "c2-mid");
    REQUIRE(r.evictions.size() == 1);
    CHECK(r.evictions[0].policy == "reclaimWithinCohort");
    CHECK(r.evictions[0].conforms == true);
    CHECK(r.findings.empty());
  }
  SECTION("TestPreemption \"no workloads borrowing\": an eviction recorded anyway") {
    Cluster c;
    c.queue("c1", "cohort", "6", kC1, "6");
    c.queue("c2", "cohort", "6", kC2, "6");
    c.add("ADDED", reserved("c1-high", "c1", 1, "4"));
    c.add("ADDED", reserved("c2-low-1", "c2", -1, "4"));
    preempt(c, "c2-low-1", "c2", -1, "4", "in", "c1", 1, "4", "InCohortReclamation");
    const auto r = why(c, "c2-low-1");
    REQUIRE(r.evictions.size() == 1);
    CHECK(r.evictions[0].conforms == false);
    CHECK(r.evictions[0].explanation.find("within its nominal quota") != std::string::npos);
    CHECK(r.findings.size() == 1);
  }
}

TEST_CASE("borrowWithinCohort preempts only below its priority threshold", "[why]") {
  // defaultClusterQueues' a_standard / b_standard / shared.
  auto cluster = [](int victimPriority) {
    Cluster c;
    c.queue("a_standard", "with_shared_cq", "1", kWithThreshold, "12");
    c.queue("b_standard", "with_shared_cq", "1", kWithThreshold, "12");
    c.queue("shared", "with_shared_cq", "10", nullptr);
    c.add("ADDED", reserved("b", "b_standard", victimPriority, "10"));
    preempt(c, "b", "b_standard", victimPriority, "10", "in", "a_standard", 3, "10",
            "InCohortReclaimWhileBorrowing");
    return c;
  };
  SECTION("at the threshold") {
    const auto r = why(cluster(0), "b");
    REQUIRE(r.evictions.size() == 1);
    CHECK(r.evictions[0].policy == "borrowWithinCohort");
    CHECK(r.evictions[0].conforms == true);
  }
  SECTION("above the threshold") {
    const auto r = why(cluster(1), "b");
    REQUIRE(r.evictions.size() == 1);
    CHECK(r.evictions[0].policy == "borrowWithinCohort");
    CHECK(r.evictions[0].conforms == false);
    CHECK(r.evictions[0].explanation.find("maxPriorityThreshold 0") != std::string::npos);
  }
}

TEST_CASE("a workload pending behind a borrowing neighbour", "[why]") {
  Cluster c;
  c.queue("c1", "cohort", "4", nullptr, "4");
  c.queue("c2", "cohort", "4", nullptr, "4");
  const Json neighbour = reserved("neighbour", "c2", 0, "7");
  c.add("ADDED", neighbour);
  const std::string created = c.add("ADDED", workload("w", "c1", 0, "2"));
  Json pending = workload("w", "c1", 0, "2");
  pending["status"]["conditions"] = Json::array({condition(
      "QuotaReserved", "False", "Pending",
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
      "default, 1 more needed")});
  c.add("MODIFIED", pending);
  c.add("MODIFIED", k8s::finished(neighbour));
  const std::string admitted = c.add("MODIFIED", reserved("w", "c1", 0, "2"));
  const auto r = why(c, "w");
  REQUIRE(r.found);
  REQUIRE(r.intervals.size() == 2);
  const auto& p = r.intervals[0];
  CHECK(p.state == "Pending");
  CHECK(formatRfc3339(p.fromNs) == created);
  REQUIRE(p.toNs);
  CHECK(formatRfc3339(*p.toNs) == admitted);
  CHECK(p.reason.find("1 more needed") != std::string::npos);
  REQUIRE(p.blockedBy.size() == 1);
  CHECK(p.blockedBy[0].workload == "t/neighbour");
  CHECK(p.blockedBy[0].clusterQueue == "c2");
  CHECK(p.blockedBy[0].resource == "cpu");
  CHECK(p.blockedBy[0].amount == "7");
  CHECK(r.intervals[1].state == "Admitted");
  CHECK_FALSE(r.intervals[1].toNs);
  CHECK(r.evictions.empty());
}
