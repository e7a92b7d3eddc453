// Cases of Kueue's pkg/scheduler/flavorassigner/flavorassigner_test.go
// (TestAssignFlavors, TestDeletedFlavors, TestHierarchical, TestIsPreferred),
// each TEST_CASE named "<upstream test>/<upstream case>". Inputs are the
// upstream ones; expectations are upstream's flavors per resource, modes,
// borrowing and status reasons (Kueue's exact messages).
#include "tests/replay/admission/admission_fixture.h"

using namespace ledger::testing::admission;
using M = std::map<std::string, std::string>;
using V = std::vector<std::string>;

namespace {

const Json kMayStop = {{"flavorFungibility",
                        {{"whenCanBorrow", "MayStopSearch"}, {"whenCanPreempt", "MayStopSearch"}}}};
const Json kTryNext = {{"flavorFungibility",
                        {{"whenCanBorrow", "TryNextFlavor"}, {"whenCanPreempt", "TryNextFlavor"}}}};

}  // namespace

TEST_CASE("TestAssignFlavors/single flavor, fits", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith(
      "cq", {group({flavorQuotas("default", {quota("cpu", "1"), quota("memory", "2Mi")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}, {"memory", "1Mi"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "default/Fit"}, {"memory", "default/Fit"}});
  CHECK(a.usage.at({"default", "memory"}) == 1024 * 1024);
  CHECK(a.message().empty());
}

TEST_CASE("TestAssignFlavors/single flavor, fits tainted flavor", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("tainted", {quota("cpu", "4")})})}));
  auto a = f.assign(
      "cq",
      {podSetWith("main", 1, {{"cpu", "1"}},
                  {{"tolerations", {toleration("instance", "Equal", "spot", "NoSchedule")}}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "tainted/Fit"}});
}

TEST_CASE("TestAssignFlavors/single flavor, fits tainted flavor with toleration", "[admission]") {
  Fixture f;
  f.add(
      clusterQueueWith("cq", {group({flavorQuotas("taint_and_toleration", {quota("cpu", "4")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "taint_and_toleration/Fit"}});
}

TEST_CASE("TestAssignFlavors/single flavor, used resources, doesn't fit", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("default", {quota("cpu", "4")})})}));
  f.use("cq", "default", "cpu", "3");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "2"}})});
  CHECK(a.representativeMode() == AssignmentMode::kPreempt);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "default/Preempt"}});
  CHECK(a.message() ==
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "default, 1 more needed");
}

TEST_CASE("TestAssignFlavors/multiple resource groups, fits", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "2")}),
                                       flavorQuotas("two", {quota("cpu", "4")})}),
                                group({flavorQuotas("b_one", {quota("memory", "1Gi")}),
                                       flavorQuotas("b_two", {quota("memory", "5Gi")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "3"}, {"memory", "10Mi"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}, {"memory", "b_one/Fit"}});
}

TEST_CASE(
    "TestAssignFlavors/multiple resource groups, one could fit with preemption, other "
    "doesn't fit",
    "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "3")})}),
                                group({flavorQuotas("b_one", {quota("memory", "1Mi")})})}));
  f.use("cq", "one", "cpu", "1");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "3"}, {"memory", "10Mi"}})});
  CHECK(a.representativeMode() == AssignmentMode::kNoFit);
  CHECK(a.podSets[0].flavors.empty());
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient quota for memory in flavor b_one, previously considered podsets requests "
          "(0) + current podset request (10Mi) > maximum capacity (1Mi)"});
}

TEST_CASE("TestAssignFlavors/multiple resource groups with multiple resources, fits",
          "[admission]") {
  Fixture f;
  f.add(clusterQueueWith(
      "cq", {group({flavorQuotas("one", {quota("cpu", "2"), quota("memory", "1Gi")}),
                    flavorQuotas("two", {quota("cpu", "4"), quota("memory", "15Mi")})}),
             group({flavorQuotas("b_one", {quota("example.com/gpu", "4")}),
                    flavorQuotas("b_two", {quota("example.com/gpu", "2")})})}));
  auto a = f.assign(
      "cq", {podSetWith("main", 1, {{"cpu", "3"}, {"memory", "10Mi"}, {"example.com/gpu", "3"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(flavorsOf(a.podSets[0]) ==
        M{{"cpu", "two/Fit"}, {"memory", "two/Fit"}, {"example.com/gpu", "b_one/Fit"}});
}

TEST_CASE(
    "TestAssignFlavors/multiple resource groups with multiple resources, fits with "
    "different modes",
    "[admission]") {
  Fixture f;
  f.add(
      clusterQueueWith("cq",
                       {group({flavorQuotas("one", {quota("cpu", "2"), quota("memory", "1Gi")}),
                               flavorQuotas("two", {quota("cpu", "4"), quota("memory", "15Mi")})}),
                        group({flavorQuotas("b_one", {quota("example.com/gpu", "4")})})},
                       "test-cohort"));
  f.add(clusterQueueWith("secondary",
                         {group({flavorQuotas("b_one", {quota("example.com/gpu", "0")})})},
                         "test-cohort"));
  f.use("cq", "two", "memory", "10Mi");
  f.use("secondary", "b_one", "example.com/gpu", "2");
  f.simulate("two", "memory", PreemptionMode::kPreempt, 1);
  auto a = f.assign(
      "cq", {podSetWith("main", 1, {{"cpu", "3"}, {"memory", "10Mi"}, {"example.com/gpu", "3"}})});
  CHECK(a.representativeMode() == AssignmentMode::kPreempt);
  CHECK(a.borrowing == 1);
  CHECK(flavorsOf(a.podSets[0]) ==
        M{{"cpu", "two/Fit"}, {"memory", "two/Preempt"}, {"example.com/gpu", "b_one/Preempt"}});
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient quota for cpu in flavor one, previously considered podsets requests (0) + "
          "current podset request (3) > maximum capacity (2)",
          "insufficient unused quota for example.com/gpu in flavor b_one, 1 more needed",
          "insufficient unused quota for memory in flavor two, 5Mi more needed"});
}

TEST_CASE("TestAssignFlavors/multiple resources in a group, doesn't fit", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith(
      "cq", {group({flavorQuotas("one", {quota("cpu", "2"), quota("memory", "1Gi")}),
                    flavorQuotas("two", {quota("cpu", "4"), quota("memory", "5Mi")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "3"}, {"memory", "10Mi"}})});
  CHECK(a.representativeMode() == AssignmentMode::kNoFit);
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient quota for cpu in flavor one, previously considered podsets requests (0) + "
          "current podset request (3) > maximum capacity (2)",
          "insufficient quota for memory in flavor two, previously considered podsets requests (0) "
          "+ current podset request (10Mi) > maximum capacity (5Mi)"});
}

TEST_CASE("TestAssignFlavors/multiple flavors, fits while skipping tainted flavor", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("tainted", {quota("cpu", "4")}),
                                       flavorQuotas("two", {quota("cpu", "4")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "3"}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}});
  REQUIRE(a.podSets[0].rejectedFlavors.size() == 1);
  CHECK(a.podSets[0].rejectedFlavors[0].reason ==
        "untolerated taint {instance spot NoSchedule <nil>} in flavor tainted");
}

TEST_CASE("TestAssignFlavors/multiple flavors, fits a node selector", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "4")}),
                                       flavorQuotas("two", {quota("cpu", "4")})})}));
  Json spec = requiredAffinity(Json::array(
      {{{"matchExpressions", {{{"key", "ignored2"}, {"operator", "In"}, {"values", {"bar"}}}}}}}));
  spec["nodeSelector"] = {{"type", "two"}, {"ignored1", "foo"}};
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}}, spec)});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}});
  REQUIRE(a.podSets[0].rejectedFlavors.size() == 1);
  CHECK(a.podSets[0].rejectedFlavors[0].reason == "flavor one doesn't match node affinity");
}

TEST_CASE("TestAssignFlavors/multiple flavors, fits with node affinity", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith(
      "cq", {group({flavorQuotas("one", {quota("cpu", "4"), quota("memory", "1Gi")}),
                    flavorQuotas("two", {quota("cpu", "4"), quota("memory", "1Gi")})})}));
  Json spec = requiredAffinity(Json::array(
      {{{"matchExpressions", {{{"key", "type"}, {"operator", "In"}, {"values", {"two"}}}}}}}));
  spec["nodeSelector"] = {{"ignored1", "foo"}};
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}, {"memory", "1Mi"}}, spec)});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}, {"memory", "two/Fit"}});
}

TEST_CASE("TestAssignFlavors/multiple flavors, node affinity fits any flavor", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "4")}),
                                       flavorQuotas("two", {quota("cpu", "4")})})}));
  Json spec = requiredAffinity(Json::array(
      {{{"matchExpressions", {{{"key", "ignored2"}, {"operator", "In"}, {"values", {"bar"}}}}}},
       {{"matchExpressions", {{{"key", "cpuType"}, {"operator", "In"}, {"values", {"two"}}}}}}}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}}, spec)});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Fit"}});
}

TEST_CASE(
    "TestAssignFlavors/multiple flavors with different label keys, selector only uses "
    "flavor's own keys",
    "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("label-x-a", {quota("cpu", "4")}),
                                       flavorQuotas("label-xy-b", {quota("cpu", "4")})})}));
  auto a = f.assign(
      "cq", {podSetWith("main", 1, {{"cpu", "1"}}, {{"nodeSelector", {{"x", "a"}, {"y", "g"}}}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "label-x-a/Fit"}});
}

TEST_CASE(
    "TestAssignFlavors/labelless flavor in group with labeled flavor, workload uses "
    "labeled selector",
    "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("default", {quota("cpu", "4")}),
                                       flavorQuotas("two", {quota("cpu", "4")})})}));
  auto a = f.assign("cq",
                    {podSetWith("main", 1, {{"cpu", "1"}}, {{"nodeSelector", {{"type", "two"}}}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "default/Fit"}});
}

TEST_CASE("TestAssignFlavors/multiple flavors, doesn't fit node affinity", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "4")}),
                                       flavorQuotas("two", {quota("cpu", "4")})})}));
  Json spec = requiredAffinity(Json::array(
      {{{"matchExpressions", {{{"key", "type"}, {"operator", "In"}, {"values", {"three"}}}}}}}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}}, spec)});
  CHECK(a.representativeMode() == AssignmentMode::kNoFit);
  CHECK(a.message() ==
        "couldn't assign flavors to pod set main: flavor one doesn't match node affinity, flavor "
        "two doesn't match node affinity");
}

TEST_CASE("TestAssignFlavors/multiple specs, fit different flavors", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "4")}),
                                       flavorQuotas("two", {quota("cpu", "10")})})}));
  auto a = f.assign(
      "cq", {podSetWith("driver", 1, {{"cpu", "5"}}), podSetWith("worker", 1, {{"cpu", "3"}})});
  REQUIRE(a.podSets.size() == 2);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}});
  CHECK(flavorsOf(a.podSets[1]) == M{{"cpu", "one/Fit"}});
  CHECK(a.usage.at({"one", "cpu"}) == 3000);
  CHECK(a.usage.at({"two", "cpu"}) == 5000);
}

TEST_CASE("TestAssignFlavors/multiple specs, fits borrowing", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith(
      "cq", {group({flavorQuotas("default", {quota("cpu", "2", "98"), quota("memory", "2Gi")})})},
      "test-cohort"));
  f.add(clusterQueueWith(
      "secondary",
      {group({flavorQuotas("default", {quota("cpu", "198"), quota("memory", "198Gi")})})},
      "test-cohort"));
  auto a = f.assign("cq", {podSetWith("driver", 1, {{"cpu", "4"}, {"memory", "1Gi"}}),
                           podSetWith("worker", 1, {{"cpu", "6"}, {"memory", "4Gi"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(a.borrowing == 1);
  CHECK(flavorsOf(a.podSets[1]) == M{{"cpu", "default/Fit"}, {"memory", "default/Fit"}});
  CHECK(a.podSets[1].flavors.at("cpu").borrowCohort == "test-cohort");
}

TEST_CASE("TestAssignFlavors/not enough space to borrow", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "1")})})}, "test-cohort"));
  f.add(clusterQueueWith("secondary", {group({flavorQuotas("one", {quota("cpu", "10", "", "0")})})},
                         "test-cohort"));
  f.use("secondary", "one", "cpu", "9");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "2"}})});
  CHECK(a.representativeMode() == AssignmentMode::kNoFit);
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient quota for cpu in flavor one, previously considered podsets requests (0) + "
          "current podset request (2) > maximum capacity (1)"});
}

TEST_CASE("TestAssignFlavors/past max, but can preempt in ClusterQueue", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "2", "8")})})},
                         "test-cohort"));
  f.add(clusterQueueWith("secondary", {group({flavorQuotas("one", {quota("cpu", "98")})})},
                         "test-cohort"));
  f.use("cq", "one", "cpu", "9");
  f.use("secondary", "one", "cpu", "9");
  f.simulate("one", "cpu", PreemptionMode::kPreempt, 1);
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "2"}})});
  CHECK(a.representativeMode() == AssignmentMode::kPreempt);
  CHECK(a.borrowing == 1);
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient unused quota for cpu in flavor one, 1 more needed"});
}

TEST_CASE("TestAssignFlavors/past min, but can preempt in ClusterQueue", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "2")})})}));
  f.use("cq", "one", "cpu", "1");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "2"}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Preempt"}});
  CHECK(a.borrowing == 0);
}

TEST_CASE("TestAssignFlavors/past min, but can preempt in cohort and ClusterQueue", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "3")})})}, "test-cohort"));
  f.add(clusterQueueWith("secondary", {group({flavorQuotas("one", {quota("cpu", "7")})})},
                         "test-cohort"));
  f.use("cq", "one", "cpu", "2");
  f.use("secondary", "one", "cpu", "8");
  f.simulate("one", "cpu", PreemptionMode::kPreempt, 1);
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "2"}})});
  CHECK(a.representativeMode() == AssignmentMode::kPreempt);
  CHECK(a.borrowing == 1);
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient unused quota for cpu in flavor one, 2 more needed"});
}

TEST_CASE("TestAssignFlavors/can only preempt flavors that match affinity", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "4")}),
                                       flavorQuotas("two", {quota("cpu", "4")})})}));
  f.use("cq", "one", "cpu", "3");
  f.use("cq", "two", "cpu", "3");
  auto a = f.assign("cq",
                    {podSetWith("main", 1, {{"cpu", "2"}}, {{"nodeSelector", {{"type", "two"}}}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Preempt"}});
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"flavor one doesn't match node affinity",
          "insufficient unused quota for cpu in flavor two, 1 more needed"});
}

TEST_CASE("TestAssignFlavors/each podset requires preemption on a different flavor",
          "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "4")}),
                                       flavorQuotas("tainted", {quota("cpu", "10")})})}));
  f.use("cq", "one", "cpu", "3");
  f.use("cq", "tainted", "cpu", "3");
  auto a = f.assign(
      "cq",
      {podSetWith("launcher", 1, {{"cpu", "2"}}),
       podSetWith("workers", 10, {{"cpu", "1"}},
                  {{"tolerations", {toleration("instance", "Equal", "spot", "NoSchedule")}}})});
  REQUIRE(a.podSets.size() == 2);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Preempt"}});
  CHECK(flavorsOf(a.podSets[1]) == M{{"cpu", "tainted/Preempt"}});
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient unused quota for cpu in flavor one, 1 more needed",
          "untolerated taint {instance spot NoSchedule <nil>} in flavor tainted"});
  CHECK(sortedReasons(a.podSets[1]) ==
        V{"insufficient quota for cpu in flavor one, previously considered podsets requests (2) + "
          "current podset request (10) > maximum capacity (4)",
          "insufficient unused quota for cpu in flavor tainted, 3 more needed"});
}

TEST_CASE("TestAssignFlavors/resource not listed in clusterQueue", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "4")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"example.com/gpu", "2"}})});
  CHECK(a.representativeMode() == AssignmentMode::kNoFit);
  CHECK(a.message() ==
        "couldn't assign flavors to pod set main: resource example.com/gpu unavailable in "
        "ClusterQueue");
  CHECK(a.podSets[0].uncovered == V{"example.com/gpu"});
}

TEST_CASE("TestAssignFlavors/zero resource request not in clusterQueue should succeed",
          "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("default", {quota("cpu", "4")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}, {"example.com/gpu", "0"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "default/Fit"}});
}

TEST_CASE(
    "TestAssignFlavors/zero resource request defined in clusterQueue should get flavor "
    "assigned",
    "[admission]") {
  Fixture f;
  f.add(clusterQueueWith(
      "cq",
      {group({flavorQuotas("default", {quota("cpu", "4"), quota("example.com/gpu", "4")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}, {"example.com/gpu", "0"}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "default/Fit"}, {"example.com/gpu", "default/Fit"}});
}

TEST_CASE("TestAssignFlavors/num pods fit", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith(
      "cq", {group({flavorQuotas("default", {quota("pods", "3"), quota("cpu", "10")})})}));
  auto a = f.assign("cq", {podSetWith("main", 3, {{"cpu", "1"}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "default/Fit"}, {"pods", "default/Fit"}});
  CHECK(a.podSets[0].requests.at("pods") == 3);
}

TEST_CASE("TestAssignFlavors/num pods don't fit", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith(
      "cq", {group({flavorQuotas("default", {quota("pods", "2"), quota("cpu", "10")})})}));
  auto a = f.assign("cq", {podSetWith("main", 3, {{"cpu", "1"}})});
  CHECK(a.representativeMode() == AssignmentMode::kNoFit);
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient quota for pods in flavor default, previously considered podsets requests "
          "(0) + current podset request (3) > maximum capacity (2)"});
}

namespace {

// The two flavors of the fungibility cases: 10 pods and 10 cpu each.
Json fungibilityQueue(const Json& fungibility,
                      const std::string& apiVersion = "kueue.x-k8s.io/v1beta2") {
  return clusterQueueWith("cq",
                          {group({flavorQuotas("one", {quota("pods", "10"), quota("cpu", "10")}),
                                  flavorQuotas("two", {quota("pods", "10"), quota("cpu", "10")})})},
                          "", fungibility, apiVersion);
}

}  // namespace

TEST_CASE("TestAssignFlavors/preempt before try next flavor", "[admission]") {
  Fixture f;
  f.add(fungibilityQueue(kMayStop));
  f.use("cq", "one", "cpu", "2");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "9"}})});
  CHECK(a.representativeMode() == AssignmentMode::kPreempt);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Preempt"}, {"pods", "one/Fit"}});
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient unused quota for cpu in flavor one, 1 more needed"});
}

TEST_CASE(
    "TestAssignFlavors/preempt before try next flavor; using deprecated "
    "WhenCanBorrow=Borrow,WhenCanPreempt=Preempt (v1beta1 spellings)",
    "[admission]") {
  Fixture f;
  f.add(fungibilityQueue(
      {{"flavorFungibility", {{"whenCanBorrow", "Borrow"}, {"whenCanPreempt", "Preempt"}}}},
      "kueue.x-k8s.io/v1beta1"));
  f.use("cq", "one", "cpu", "2");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "9"}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Preempt"}, {"pods", "one/Fit"}});
}

TEST_CASE("TestAssignFlavors/preempt try next flavor", "[admission]") {
  Fixture f;
  f.add(fungibilityQueue(Json::object()));  // defaults: whenCanPreempt TryNextFlavor
  f.use("cq", "one", "cpu", "2");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "9"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}, {"pods", "two/Fit"}});
  CHECK(a.podSets[0].reasons.empty());
}

namespace {

void borrowCase(Fixture& f, const Json& fungibility, const std::string& twoCpu) {
  f.add(
      clusterQueueWith("cq",
                       {group({flavorQuotas("one", {quota("pods", "10"), quota("cpu", "10", "1")}),
                               flavorQuotas("two", {quota("pods", "10"), quota("cpu", twoCpu)})})},
                       "test-cohort", fungibility));
  f.add(clusterQueueWith("secondary", {group({flavorQuotas("one", {quota("cpu", "1")})})},
                         "test-cohort"));
  f.use("cq", "one", "cpu", "2");
}

}  // namespace

TEST_CASE("TestAssignFlavors/borrow try next flavor, found the first flavor", "[admission]") {
  Fixture f;
  borrowCase(f, kTryNext, "1");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "9"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(a.borrowing == 1);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Fit"}, {"pods", "one/Fit"}});
}

TEST_CASE("TestAssignFlavors/borrow try next flavor, found the second flavor", "[admission]") {
  Fixture f;
  borrowCase(f, kTryNext, "10");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "9"}})});
  CHECK(a.borrowing == 0);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}, {"pods", "two/Fit"}});
}

TEST_CASE("TestAssignFlavors/borrow before try next flavor", "[admission]") {
  Fixture f;
  borrowCase(f, Json::object(), "10");  // default whenCanBorrow: MayStopSearch
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "9"}})});
  CHECK(a.borrowing == 1);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Fit"}, {"pods", "one/Fit"}});
}

namespace {

void borrowWhilePreempting(Fixture& f, const Json& fungibility) {
  Json spec = fungibility;
  spec["preemption"] = {{"reclaimWithinCohort", "LowerPriority"},
                        {"borrowWithinCohort", {{"policy", "LowerPriority"}}}};
  f.add(clusterQueueWith("cq",
                         {group({flavorQuotas("one", {quota("cpu", "0", "12")}),
                                 flavorQuotas("two", {quota("cpu", "12")})})},
                         "test-cohort", spec));
  f.add(clusterQueueWith("secondary", {group({flavorQuotas("one", {quota("cpu", "12")})})},
                         "test-cohort"));
  f.use("secondary", "one", "cpu", "10");
  f.simulate("one", "cpu", PreemptionMode::kPreempt, 1);
  // borrowWithinCohort is not in the projection: the caller says it is set.
  f.canPreemptWhileBorrowing = true;
}

}  // namespace

TEST_CASE(
    "TestAssignFlavors/when borrowing while preemption is needed for flavor one; "
    "WhenCanBorrow=MayStopSearch,WhenCanPreempt=MayStopSearch",
    "[admission]") {
  Fixture f;
  borrowWhilePreempting(f, kMayStop);
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "12"}})});
  CHECK(a.representativeMode() == AssignmentMode::kPreempt);
  CHECK(a.borrowing == 1);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Preempt"}});
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient unused quota for cpu in flavor one, 10 more needed"});
}

TEST_CASE(
    "TestAssignFlavors/when borrowing while preemption is needed for flavor one; "
    "WhenCanBorrow=TryNextFlavor,WhenCanPreempt=MayStopSearch",
    "[admission]") {
  Fixture f;
  borrowWhilePreempting(
      f, {{"flavorFungibility",
           {{"whenCanBorrow", "TryNextFlavor"}, {"whenCanPreempt", "MayStopSearch"}}}});
  f.usage.clear();  // upstream: no usage in this variant
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "12"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}});
}

TEST_CASE(
    "TestAssignFlavors/when borrowing while preemption is needed, but borrowingLimit "
    "exceeds the quota available in the cohort",
    "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("one", {quota("cpu", "0", "12")})})},
                         "test-cohort"));
  f.add(clusterQueueWith("secondary", {group({flavorQuotas("one", {quota("cpu", "11")})})},
                         "test-cohort"));
  f.use("secondary", "one", "cpu", "10");
  f.canPreemptWhileBorrowing = true;
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "12"}})});
  CHECK(a.representativeMode() == AssignmentMode::kNoFit);
  CHECK(sortedReasons(a.podSets[0]) ==
        V{"insufficient quota for cpu in flavor one, previously considered podsets requests (0) + "
          "current podset request (12) > maximum capacity (11)"});
}

namespace {

void lendCase(Fixture& f, const std::string& twoNominal) {
  f.add(clusterQueueWith(
      "cq",
      {group({flavorQuotas("one", {quota("pods", "10"), quota("cpu", "10", "", "1")}),
              flavorQuotas("two", {quota("pods", "10"), quota("cpu", twoNominal, "", "0")})})},
      "test-cohort", kTryNext));
  f.add(clusterQueueWith("secondary", {group({flavorQuotas("one", {quota("cpu", "1")})})},
                         "test-cohort"));
  f.use("cq", "one", "cpu", "2");
}

}  // namespace

TEST_CASE("TestAssignFlavors/lend try next flavor, found the second flavor", "[admission]") {
  Fixture f;
  lendCase(f, "10");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "9"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(a.borrowing == 0);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}, {"pods", "two/Fit"}});
}

TEST_CASE("TestAssignFlavors/lend try next flavor, found the first flavor", "[admission]") {
  Fixture f;
  lendCase(f, "1");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "9"}})});
  CHECK(a.borrowing == 1);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "one/Fit"}, {"pods", "one/Fit"}});
}

TEST_CASE(
    "TestAssignFlavors/cannot preempt in cohort (oracle returns None) for the first "
    "flavor, tries the second flavor (which fits)",
    "[admission]") {
  Fixture f;
  Json spec = kMayStop;
  spec["preemption"] = {{"reclaimWithinCohort", "LowerPriority"}};
  f.add(clusterQueueWith("cq",
                         {group({flavorQuotas("one", {quota("cpu", "0", "2")}),
                                 flavorQuotas("two", {quota("cpu", "0", "2")})})},
                         "test-cohort", spec));
  f.add(clusterQueueWith(
      "secondary",
      {group({flavorQuotas("one", {quota("cpu", "2")}), flavorQuotas("two", {quota("cpu", "2")})})},
      "test-cohort"));
  f.use("secondary", "one", "cpu", "2");
  f.simulate("one", "cpu", PreemptionMode::kNoCandidates, 0);
  f.canPreemptWhileBorrowing = true;
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "2"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(a.borrowing == 1);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}});
}

TEST_CASE("TestDeletedFlavors/multiple flavors, skip missing ResourceFlavor", "[admission]") {
  Fixture f;
  f.add(clusterQueueWith("cq", {group({flavorQuotas("deleted-flavor", {quota("cpu", "4")}),
                                       flavorQuotas("default", {quota("cpu", "4")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "3"}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "default/Fit"}});
  REQUIRE(a.podSets[0].rejectedFlavors.size() == 1);
  CHECK(a.podSets[0].rejectedFlavors[0].reason == "flavor deleted-flavor not found");
}

TEST_CASE("TestDeletedFlavors/flavor not found", "[admission]") {
  Fixture f;
  f.add(resourceFlavorWith("deleted-flavor"));
  f.remove(resourceFlavorWith("deleted-flavor"));
  f.add(clusterQueueWith("cq", {group({flavorQuotas("deleted-flavor", {quota("cpu", "4")})})}));
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "1"}})});
  CHECK(a.representativeMode() == AssignmentMode::kNoFit);
  CHECK(a.message() == "couldn't assign flavors to pod set main: flavor deleted-flavor not found");
}

namespace {

// TestHierarchical: cohorts three <- two <- one, each with 4 cpu of the
// flavor of its name; the queue (in `one`) has none of its own.
void hierarchy(Fixture& f) {
  for (const char* n : {"three"}) f.add(resourceFlavorWith(n));
  f.add(cohort("three", "", {group({flavorQuotas("three", {quota("cpu", "4")})})}));
  f.add(cohort("two", "three", {group({flavorQuotas("two", {quota("cpu", "4")})})}));
  f.add(cohort("one", "two", {group({flavorQuotas("one", {quota("cpu", "4")})})}));
  const auto zeros =
      group({flavorQuotas("one", {quota("cpu", "0")}), flavorQuotas("two", {quota("cpu", "0")}),
             flavorQuotas("three", {quota("cpu", "0")})});
  f.add(clusterQueueWith(
      "cq", {zeros}, "one",
      {{"preemption",
        {{"withinClusterQueue", "LowerPriority"}, {"reclaimWithinCohort", "LowerPriority"}}},
       {"flavorFungibility", {{"whenCanPreempt", "TryNextFlavor"}}}}));
  f.add(clusterQueueWith("other", {zeros}, "two"));
  f.use("cq", "one", "cpu", "4");
}

}  // namespace

TEST_CASE("TestHierarchical/Select the top flavor", "[admission]") {
  Fixture f;
  hierarchy(f);
  f.use("other", "two", "cpu", "4");
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "4"}})});
  CHECK(a.representativeMode() == AssignmentMode::kFit);
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "three/Fit"}});
  CHECK(a.borrowing == 3);  // the height of cohort three
  CHECK(a.podSets[0].flavors.at("cpu").borrowCohort == "three");
}

TEST_CASE("TestHierarchical/Select the first flavor which fits", "[admission]") {
  Fixture f;
  hierarchy(f);
  auto a = f.assign("cq", {podSetWith("main", 1, {{"cpu", "4"}})});
  CHECK(flavorsOf(a.podSets[0]) == M{{"cpu", "two/Fit"}});
  CHECK(a.podSets[0].flavors.at("cpu").borrowCohort == "two");
}

TEST_CASE("TestIsPreferred", "[admission]") {
  using P = PreemptionMode;
  // explicit BorrowingOverPreemption prioritises borrowing distance
  CHECK(isPreferred({P::kFit, 0}, {P::kFit, 1}));
  CHECK_FALSE(isPreferred({P::kFit, 1}, {P::kFit, 0}));
  // better preemption mode first
  CHECK(isPreferred({P::kReclaim, 2}, {P::kPreempt, 0}));
  // no-candidate flavor remains preferable to no-fit flavor
  CHECK(isPreferred({P::kNoCandidates, 0}, {P::kNoFit, 0}));
  // no-fit flavor remains worse than no-candidate flavor
  CHECK_FALSE(isPreferred({P::kNoFit, 0}, {P::kNoCandidates, 0}));
  // rejects no-candidate flavor before borrowing comparison
  CHECK_FALSE(isPreferred({P::kNoCandidates, 0}, {P::kPreempt, 3}));
  // no-candidate flavors retain borrowing preference (+ in reverse)
  CHECK(isPreferred({P::kNoCandidates, 0}, {P::kNoCandidates, 1}));
  CHECK_FALSE(isPreferred({P::kNoCandidates, 1}, {P::kNoCandidates, 0}));
}
