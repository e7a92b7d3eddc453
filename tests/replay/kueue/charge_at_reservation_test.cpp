// `computed` as of reservation: Kueue computes a workload's DRA charge while
// it is pending (pkg/controller/core/workload_controller.go handleDRA) and
// keeps it once quota is reserved, so the audit holds `recorded` against the
// inputs of that moment and reports today's charge as `current` /
// ChargeDrift. The same answers whether the fold starts at the beginning or
// at a checkpoint.
#include "replay/kueue/charge_at_reservation.h"

#include "replay/fold/checkpoints.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tools/render/report_format.h"

namespace ledger::testing {
namespace {

using namespace k8s;

Json gpuPod(const Json& templates) {
  return {{"containers",
           Json::array({container("w", {{"cpu", "1"}}, Json::array({{{"name", "gpu"}}}))})},
          {"resourceClaims", templates}};
}

const Json kSelectors =
    Json::array({{{"cel", {{"expression", "device.driver == 'gpu.example.com'"}}}}});

Json trainWorkload() {
  return workload(
      "team-a", "train", "user-queue",
      Json::array({podSet(
          "main", 1,
          gpuPod(Json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "single-gpu"}}})))}));
}

std::string setup(bool admit = true) {
  std::string s;
  s += event("ADDED", resourceFlavor("default-flavor"));
  s +=
      event("ADDED", clusterQueue("cq", "v1beta2", "",
                                  {{"default-flavor", {{"cpu", "10"}, {"example.com/gpu", "8"}}}}));
  s += event("ADDED", localQueue("team-a", "user-queue", "cq"));
  s += event("ADDED", deviceClass("gpu.example.com", {"device.driver == 'gpu.example.com'"}));
  s += event("ADDED", kueueConfig(Json::array({{{"name", "example.com/gpu"},
                                                {"deviceClassNames", {"gpu.example.com"}}}})));
  s += event("ADDED", resourceSlice("node-1-gpu", "gpu.example.com", "node-1", 1, 1,
                                    Json::array({device("gpu-0", Json::object()),
                                                 device("gpu-1", Json::object())})));
  // A CEL selector makes the charge read the DeviceClass and the devices
  // (Kueue's validateCELSelectorsAgainstDevices).
  s += event("ADDED", claimTemplate("team-a", "single-gpu",
                                    Json::array({exactRequest("gpu", "gpu.example.com",
                                                              {{"selectors", kSelectors}})})));
  s += event("ADDED", trainWorkload());
  if (admit) {
    s += event("MODIFIED",
               admitted(with(trainWorkload(), "metadata", metadata("team-a", "train", "2")), "cq",
                        "default-flavor", {{"cpu", "1"}, {"example.com/gpu", "1"}}));
  }
  return s;
}

std::string reportJson(const Ledger& ledger, bool useCheckpoints) {
  replay::Replayer r(ledger);
  replay::FoldOptions o;
  o.useCheckpoints = useCheckpoints;
  replay::ClusterState s = r.foldTo(ledger.lastSeq(), o);
  return render::reportToJson(replay::buildReport(s)).dump();
}

}  // namespace

TEST_CASE("a DeviceClass deleted after admission is ChargeDrift, not ChargeMismatch",
          "[charge_at_reservation]") {
  TempDir dir;
  auto ledger = openLedger(dir.path());
  ingestText(*ledger, setup());
  const std::uint64_t reservedSeq = ledger->lastSeq();
  ingestText(*ledger, event("DELETED", deviceClass("gpu.example.com", {})));
  const replay::StateReport r = reportOf(*ledger);
  const replay::WorkloadReport* w = findWorkload(r, "team-a", "train");
  REQUIRE(w != nullptr);
  CHECK(q(w->computed, "example.com/gpu") == "1");
  CHECK(w->computedAtSeq == reservedSeq);
  CHECK(w->errors.empty());
  REQUIRE(w->hasCurrent);
  CHECK_FALSE(w->currentErrors.empty());
  CHECK_FALSE(hasFinding(r, "ChargeMismatch"));
  CHECK(hasFinding(r, "ChargeDrift", "Workload team-a/train"));
}

TEST_CASE("an unchanged cluster gives no current and computedAt is the reservation",
          "[charge_at_reservation]") {
  TempDir dir;
  auto ledger = openLedger(dir.path());
  ingestText(*ledger, setup());
  const std::uint64_t reservedSeq = ledger->lastSeq();
  // A template nobody uses changes: nothing this workload reads.
  ingestText(*ledger, event("ADDED", claimTemplate("team-a", "other",
                                                   Json::array({exactRequest("g", "x")}))));
  const replay::StateReport r = reportOf(*ledger);
  const replay::WorkloadReport* w = findWorkload(r, "team-a", "train");
  REQUIRE(w != nullptr);
  CHECK(w->computedAtSeq == reservedSeq);
  CHECK_FALSE(w->hasCurrent);
  CHECK(r.findings.empty());
}

TEST_CASE("a pending workload is computed on the report's state", "[charge_at_reservation]") {
  TempDir dir;
  auto ledger = openLedger(dir.path());
  ingestText(*ledger, setup(false));
  ingestText(
      *ledger,
      event("MODIFIED",
            claimTemplate("team-a", "single-gpu",
                          Json::array({exactRequest("gpu", "gpu.example.com", {{"count", 3}})}),
                          "2")));
  const replay::StateReport r = reportOf(*ledger);
  const replay::WorkloadReport* w = findWorkload(r, "team-a", "train");
  REQUIRE(w != nullptr);
  CHECK(w->state == "Pending");
  CHECK(q(w->computed, "example.com/gpu") == "3");
  CHECK(w->computedAtSeq == ledger->lastSeq());
  CHECK_FALSE(w->hasCurrent);
}

TEST_CASE("a mapping changed after admission is ChargeDrift naming the mapping",
          "[charge_at_reservation]") {
  TempDir dir;
  auto ledger = openLedger(dir.path());
  ingestText(*ledger, setup());
  ingestText(*ledger, event("MODIFIED",
                            kueueConfig(Json::array({{{"name", "example.com/accel"},
                                                      {"deviceClassNames", {"gpu.example.com"}}}}),
                                        "2")));
  const replay::StateReport r = reportOf(*ledger);
  const replay::WorkloadReport* w = findWorkload(r, "team-a", "train");
  REQUIRE(w != nullptr);
  CHECK(q(w->computed, "example.com/gpu") == "1");
  REQUIRE(w->hasCurrent);
  CHECK(q(w->currentComputed, "example.com/accel") == "1");
  CHECK_FALSE(hasFinding(r, "ChargeMismatch"));
  bool named = false;
  for (const auto& f : r.findings) {
    if (f.type == "ChargeDrift" && f.message.find("the DRA mapping changed") != std::string::npos)
      named = true;
  }
  CHECK(named);
}

TEST_CASE("the charge history survives checkpoints: the same report from either fold",
          "[charge_at_reservation][checkpoints]") {
  TempDir dir;
  auto ledger = openLedger(dir.path());
  ingestText(*ledger, setup());
  // Checkpoints between the reservation and the changes, and after them.
  replay::writeCheckpoints(*ledger, 3);
  std::string changes;
  changes += event("DELETED", claimTemplate("team-a", "single-gpu", Json::array()));
  changes += event(
      "ADDED",
      claimTemplate("team-a", "single-gpu",
                    Json::array({exactRequest("gpu", "gpu.example.com", {{"count", 2}})}), "3"));
  changes +=
      event("MODIFIED", kueueConfig(Json::array({{{"name", "example.com/accel"},
                                                  {"deviceClassNames", {"gpu.example.com"}}}}),
                                    "2"));
  ingestText(*ledger, changes);
  replay::writeCheckpoints(*ledger, 3);
  const std::string fresh = reportJson(*ledger, false);
  CHECK(reportJson(*ledger, true) == fresh);
  CHECK(fresh.find("\"current\"") != std::string::npos);
  const replay::CheckpointVerification v = replay::verifyCheckpoints(*ledger);
  CHECK(v.firstBadSeq == 0);
  CHECK(v.checked >= 3);
}

TEST_CASE("retired versions are dropped once no reservation needs them",
          "[charge_at_reservation]") {
  TempDir dir;
  auto ledger = openLedger(dir.path());
  ingestText(*ledger, setup());
  ingestText(
      *ledger,
      event("MODIFIED",
            claimTemplate("team-a", "single-gpu",
                          Json::array({exactRequest("gpu", "gpu.example.com", {{"count", 2}})}),
                          "2")));
  replay::Replayer r(*ledger);
  {
    replay::ClusterState s = r.foldTo(ledger->lastSeq());
    CHECK(s.objects(replay::ObjectKind::kRetiredInput).size() == 1);
  }
  // The workload finishes and is deleted: its reservation ends.
  ingestText(*ledger,
             event("DELETED", with(trainWorkload(), "metadata", metadata("team-a", "train", "3"))));
  replay::ClusterState s = r.foldTo(ledger->lastSeq());
  CHECK(s.objects(replay::ObjectKind::kRetiredInput).empty());
  CHECK_FALSE(s.chargeHistory().anyReservation());
}

}  // namespace ledger::testing

namespace ledger::testing {

TEST_CASE("a driver republishing the same devices is no change; other devices are",
          "[charge_at_reservation]") {
  TempDir dir;
  auto ledger = openLedger(dir.path());
  ingestText(*ledger, setup());
  const auto slice = [](int generation, const Json& devices, const std::string& rv) {
    return event("MODIFIED", resourceSlice("node-1-gpu", "gpu.example.com", "node-1", generation, 1,
                                           devices, nullptr, rv));
  };
  const Json two = Json::array({device("gpu-0", Json::object()), device("gpu-1", Json::object())});
  ingestText(*ledger, slice(2, two, "2"));
  {
    const replay::StateReport r = reportOf(*ledger);
    CHECK_FALSE(findWorkload(r, "team-a", "train")->hasCurrent);
    CHECK(r.findings.empty());
  }
  // The template's CEL selector now matches no device: Kueue would refuse
  // the workload today.
  ingestText(*ledger, slice(3, Json::array({device("other-0", Json::object())}), "3"));
  ingestText(*ledger, event("MODIFIED", resourceSlice("node-1-gpu", "other.example.com", "node-1",
                                                      4, 1, two, nullptr, "4")));
  const replay::StateReport r = reportOf(*ledger);
  const replay::WorkloadReport* w = findWorkload(r, "team-a", "train");
  CHECK(q(w->computed, "example.com/gpu") == "1");
  REQUIRE(w->hasCurrent);
  CHECK_FALSE(w->currentErrors.empty());
  CHECK(hasFinding(r, "ChargeDrift", "Workload team-a/train"));
}

}  // namespace ledger::testing
