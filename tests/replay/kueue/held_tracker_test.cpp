// The held and uncharged integrals of the usage report (replay/kueue/
// held_tracker.h, usage_levels.h) against a brute-force pass over the log:
// the state folded afresh at every record, every allocated claim of it
// measured and attributed from scratch, each level held until the next
// record. The demo cluster (claims allocated and released, a pod turning
// Succeeded, a claim deleted, whole GPUs and MIG partitions charged in
// counter units) plus a notebook pod of no Workload holding a partition and
// a whole GPU until it is deleted.
#include <tuple>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "ledger/format.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/dra/device_catalog.h"
#include "replay/kueue/dra/held_amount.h"
#include "replay/kueue/dra/resource_mapper.h"
#include "replay/kueue/report.h"
#include "replay/kueue/usage_report.h"
#include "replay/kueue/usage_rollups.h"
#include "replay/kueue/workload_usage.h"
#include "schema/k8s/rfc3339.h"
#include "schema/rollup.capnp.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;
using replay::Integral;

// Named: the unit tests build as one unit, where anonymous namespaces meet.
namespace held_test {

std::int64_t heldAt(const std::string& t) { return *tryParseRfc3339(t); }

const char* kNotebookUid = "0b7e0000-0000-4000-8000-00000000000a";

// A pod no Job or Workload owns, in team-b, holding one MIG partition and
// the whole gpu-1 through one claim; deleted at 08:58 (its claim stays
// allocated: held no more). Then a late record, so whole hours follow.
std::string outsideKueue() {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "notebook"},
                {"namespace", "team-b"},
                {"uid", kNotebookUid},
                {"resourceVersion", "9001"},
                {"creationTimestamp", "2026-11-20T08:55:00Z"}}},
              {"spec",
               {{"containers", Json::array({{{"name", "nb"}, {"image", "jupyter"}}})},
                {"nodeName", "node-1"}}},
              {"status",
               {{"phase", "Running"},
                {"resourceClaimStatuses",
                 Json::array({{{"name", "gpu"}, {"resourceClaimName", "notebook-gpu"}}})}}}};
  Json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata",
       {{"name", "notebook-gpu"},
        {"namespace", "team-b"},
        {"uid", "0b7e0000-0000-4000-8000-00000000000b"},
        {"resourceVersion", "9002"},
        {"creationTimestamp", "2026-11-20T08:55:00Z"}}},
      {"spec",
       {{"devices",
         {{"requests",
           Json::array({{{"name", "mig"},
                         {"exactly", {{"deviceClassName", "mig.nvidia.com"}, {"count", 1}}}},
                        {{"name", "whole"},
                         {"exactly", {{"deviceClassName", "gpu.nvidia.com"}, {"count", 1}}}}})}}}}},
      {"status",
       {{"allocation",
         {{"devices",
           {{"results", Json::array({{{"request", "mig"},
                                      {"driver", "gpu.nvidia.com"},
                                      {"pool", "node-1"},
                                      {"device", "gpu-1-mig-1g5gb-0"}},
                                     {{"request", "whole"},
                                      {"driver", "gpu.nvidia.com"},
                                      {"pool", "node-1"},
                                      {"device", "gpu-1"}}})}}}}},
        {"reservedFor",
         Json::array({{{"resource", "pods"}, {"name", "notebook"}, {"uid", kNotebookUid}}})}}}};
  Json late = {{"apiVersion", "v1"},
               {"kind", "Namespace"},
               {"metadata", {{"name", "team-c"}, {"uid", "0b7e0000-0000-4000-8000-00000000000c"}}}};
  return event("ADDED", pod, "2026-11-20T08:55:00Z") +
         event("ADDED", claim, "2026-11-20T08:55:01Z") +
         event("DELETED", pod, "2026-11-20T08:58:00Z") +
         event("ADDED", late, "2026-11-20T11:30:00Z");
}

using Key = std::pair<std::string, std::string>;  // (ClusterQueue, resource)
struct Levels {
  std::map<Key, Quantity> held;
  std::map<Key, Quantity> uncharged;
};

bool contains(const std::vector<std::string>& uids, std::string_view uid) {
  return std::find(uids.begin(), uids.end(), uid) != uids.end();
}

std::vector<std::string> ownerUids(const replay::StoredObject& o) {
  std::vector<std::string> out;
  for (auto r : o.projection().getOwnerReferences()) out.emplace_back(r.getUid().cStr());
  return out;
}

// Every allocated claim of `s`, from scratch: its live, non-terminal pod,
// that pod's or the claim's Workload, what it holds.
Levels bruteLevels(const replay::ClusterState& s) {
  using replay::ObjectKind;
  const replay::StoredObject* config = s.draConfig();
  const replay::dra::ResourceMapper mapper =
      config != nullptr ? replay::dra::ResourceMapper(config->projection().getBody().getDraConfig())
                        : replay::dra::ResourceMapper();
  const replay::dra::DeviceCatalog catalog(s);
  cel::SelectorCache selectors;
  const replay::dra::HeldInputs in{s, mapper, selectors};
  std::map<const replay::StoredObject*, replay::ResourceList> byWorkload;
  Levels out;
  for (const auto& [key, c] : s.objects(ObjectKind::kResourceClaim)) {
    auto claim = c->projection().getBody().getResourceClaim();
    if (!claim.getAllocated()) continue;
    const auto claimOwners = ownerUids(*c);
    std::vector<std::string> consumers;  // status.reservedFor
    for (auto r : claim.getReservedFor()) consumers.emplace_back(r.getUid().cStr());
    const replay::StoredObject* pod = nullptr;
    for (const auto* uids :
         std::initializer_list<const std::vector<std::string>*>{&claimOwners, &consumers}) {
      for (const auto& [pk, p] : s.objects(ObjectKind::kPod)) {
        if (pod == nullptr && contains(*uids, p->uid())) pod = p.get();
      }
    }
    for (const auto& [pk, p] : s.objects(ObjectKind::kPod)) {
      for (auto st : p->projection().getBody().getPod().getResourceClaimStatuses()) {
        if (pod == nullptr && p->ns() == c->ns() &&
            replay::textView(st.getResourceClaimName()) == c->name())
          pod = p.get();
      }
    }
    if (pod == nullptr) continue;
    const std::string phase = pod->projection().getBody().getPod().getPhase().cStr();
    if (phase == "Succeeded" || phase == "Failed") continue;
    replay::ResourceList held;
    std::set<std::string> lost;
    for (auto result : claim.getResults()) {
      const auto* device = catalog.find(result.getDriver().cStr(), result.getPool().cStr(),
                                        result.getDevice().cStr());
      replay::dra::addHeld(in, replay::dra::resultClass(claim, result), device, result, held, lost);
    }
    const replay::StoredObject* workload = nullptr;
    const auto podOwners = ownerUids(*pod);
    for (const auto* uids :
         std::initializer_list<const std::vector<std::string>*>{&claimOwners, &podOwners}) {
      for (const auto& [wk, w] : s.objects(ObjectKind::kWorkload)) {
        if (workload != nullptr) break;
        const auto wlOwners = ownerUids(*w);
        if (contains(*uids, w->uid()) ||
            std::any_of(wlOwners.begin(), wlOwners.end(),
                        [&](const auto& u) { return contains(*uids, u); }))
          workload = w.get();
      }
    }
    if (workload == nullptr) {
      for (const auto& [r, q] : held) {
        out.held[{"-", r}] += q;
        out.uncharged[{"-", r}] += q;
      }
      continue;
    }
    replay::addInto(byWorkload[workload], held);
  }
  for (const auto& [w, held] : byWorkload) {
    auto wl = w->projection().getBody().getWorkload();
    const std::string cq = wl.getHasAdmission() ? wl.getAdmissionClusterQueue().cStr() : "-";
    replay::ResourceList charged;
    if (wl.getHasAdmission() && replay::conditionsOf(wl).reserving()) {
      for (const auto& [fr, q] : replay::admissionUsage(wl, nullptr)) charged[fr.second] += q;
    }
    for (const auto& [r, q] : held) {
      out.held[{cq, r}] += q;
      const Quantity c = charged.count(r) != 0 ? charged[r] : Quantity();
      if (c < q) out.uncharged[{cq, r}] += q - c;
    }
  }
  return out;
}

// The integrals over [from, to): each record's levels until the next.
std::pair<std::map<Key, Integral>, std::map<Key, Integral>> bruteIntegrals(const Ledger& ledger,
                                                                           std::int64_t from,
                                                                           std::int64_t to) {
  const replay::Replayer replayer(ledger);
  std::map<Key, Integral> held, uncharged;
  std::uint64_t seq = replayer.seqAt(from);
  std::int64_t t = from;
  while (true) {
    const Levels levels = bruteLevels(replayer.foldTo(seq));
    const std::uint64_t next = seq + 1;
    std::int64_t until = to;
    if (next <= ledger.lastSeq()) {
      const replay::ClusterState s = replayer.foldTo(next);
      until = std::min(to, std::max(from, s.timeNs()));
    }
    for (const auto& [k, q] : levels.held) held[k].add(q, until - t);
    for (const auto& [k, q] : levels.uncharged) uncharged[k].add(q, until - t);
    t = until;
    if (next > ledger.lastSeq() || until >= to) break;
    seq = next;
  }
  return {held, uncharged};
}

const replay::UsageRow* heldRowOf(const replay::UsagePeriod& p, const std::string& group,
                                  const std::string& resource) {
  for (const auto& r : p.rows) {
    if (r.group == group && r.resource == resource) return &r;
  }
  return nullptr;
}

}  // namespace held_test

using namespace held_test;

TEST_CASE("held and uncharged: every ClusterQueue row equals a brute-force pass over the log",
          "[usage][held]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  REQUIRE(ingestText(*ledger, demoStream() + outsideKueue()).errors.empty());
  for (const auto& [from, to] : {std::pair{"2026-11-20T08:00:00Z", "2026-11-20T09:00:00Z"},
                                 {"2026-11-20T08:05:06Z", "2026-11-20T08:50:07.5Z"},
                                 {"2026-11-20T08:52:00Z", "2026-11-20T12:00:00Z"}}) {
    INFO(from << " .. " << to);
    const auto [held, uncharged] = bruteIntegrals(*ledger, heldAt(from), heldAt(to));
    const auto period = replay::computeUsagePeriod(
        *ledger, heldAt(from), heldAt(to), replay::GroupBy::kClusterQueue, std::nullopt, {},
        replay::ChartSteps::kOmit, replay::UsageSource::kLog);
    for (const auto& [key, integral] : held) {
      INFO(key.first << " " << key.second);
      const replay::UsageRow* row = heldRowOf(period, key.first, key.second);
      REQUIRE(row != nullptr);
      CHECK(row->dra);
      CHECK(row->held.seconds() == integral.seconds());
      CHECK(row->uncharged.seconds() ==
            (uncharged.count(key) != 0 ? uncharged.at(key) : Integral()).seconds());
    }
    for (const auto& row : period.rows) {
      if (held.count({row.group, row.resource}) == 0) CHECK(row.held.isZero());
    }
  }
}

TEST_CASE(
    "held and uncharged: the demo's uncharged GPU, a partition in counter units, a pod "
    "outside Kueue",
    "[usage][held]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  REQUIRE(ingestText(*ledger, demoStream() + outsideKueue()).errors.empty());
  const auto period = replay::computeUsagePeriod(
      *ledger, heldAt("2026-11-20T08:00:00Z"), heldAt("2026-11-20T09:00:00Z"),
      replay::GroupBy::kClusterQueue, std::nullopt, {}, replay::ChartSteps::kOmit,
      replay::UsageSource::kLog);
  // job-legacy-infer's pod holds gpu-0 from its claim's allocation at
  // 08:50:07, charged nothing for it: 593 GPU-seconds to 09:00.
  const auto* gpu = heldRowOf(period, "team-b", "nvidia.com/gpu");
  REQUIRE(gpu != nullptr);
  CHECK(gpu->reserved.isZero());
  CHECK(gpu->held.seconds() == "593.000000000");
  CHECK(gpu->uncharged.seconds() == "593.000000000");
  // job-tune-bert's MIG partition in gpu.memory counter units, charged:
  // nothing uncharged.
  const auto* memory = heldRowOf(period, "team-b", "gpu.memory");
  REQUIRE(memory != nullptr);
  CHECK(!memory->held.isZero());
  CHECK(memory->uncharged.isZero());
  // The notebook (no Workload) from 08:55:01 to its deletion at 08:58: a
  // whole GPU and a partition, all uncharged, in the group "-".
  const auto* outside = heldRowOf(period, "-", "nvidia.com/gpu");
  REQUIRE(outside != nullptr);
  CHECK(outside->held.seconds() == "179.000000000");
  CHECK(outside->uncharged.seconds() == "179.000000000");
  REQUIRE(heldRowOf(period, "-", "gpu.memory") != nullptr);
  CHECK(heldRowOf(period, "-", "gpu.memory")->uncharged ==
        heldRowOf(period, "-", "gpu.memory")->held);
  // By namespace, the notebook is team-b's.
  const auto byNs = replay::computeUsagePeriod(
      *ledger, heldAt("2026-11-20T08:00:00Z"), heldAt("2026-11-20T09:00:00Z"),
      replay::GroupBy::kNamespace, std::nullopt, {}, replay::ChartSteps::kOmit,
      replay::UsageSource::kLog);
  REQUIRE(heldRowOf(byNs, "team-b", "nvidia.com/gpu") != nullptr);
  CHECK(heldRowOf(byNs, "team-b", "nvidia.com/gpu")->held.seconds() == "772.000000000");
}

TEST_CASE(
    "held and uncharged: rollups answer as the log does; rollups of an earlier version are "
    "rewritten",
    "[usage][held][rollups]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  REQUIRE(ingestText(*ledger, demoStream() + outsideKueue()).errors.empty());
  REQUIRE(replay::writeUsageRollups(*ledger) > 0);
  CHECK(replay::storedRollupVersion(*ledger) == replay::kUsageRollupVersion);
  const auto verification = replay::verifyUsageRollups(*ledger);
  CHECK(verification.firstBad.empty());
  CHECK(verification.checked > 0);
  for (auto by : {replay::GroupBy::kClusterQueue, replay::GroupBy::kNamespace}) {
    const auto log = replay::computeUsagePeriod(
        *ledger, heldAt("2026-11-20T08:30:00Z"), heldAt("2026-11-20T11:00:00Z"), by, std::nullopt,
        {}, replay::ChartSteps::kOmit, replay::UsageSource::kLog);
    const auto stored = replay::computeUsagePeriod(
        *ledger, heldAt("2026-11-20T08:30:00Z"), heldAt("2026-11-20T11:00:00Z"), by, std::nullopt,
        {}, replay::ChartSteps::kOmit, replay::UsageSource::kRollupsWhereStored);
    CHECK(stored.rollupProblem.empty());
    CHECK(stored.rollupBucketsRead > 0);
    REQUIRE(stored.rows.size() == log.rows.size());
    for (std::size_t i = 0; i < log.rows.size(); ++i) {
      CHECK(stored.rows[i].held == log.rows[i].held);
      CHECK(stored.rows[i].uncharged == log.rows[i].uncharged);
      CHECK(stored.rows[i].dra == log.rows[i].dra);
    }
  }
  // A bucket as a build before held wrote it (no version): not read, not
  // checked, and written again by the next writer.
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::UsageBucket>();
  root.setStartNs(heldAt("2026-11-20T09:00:00Z"));
  root.setEndNs(heldAt("2026-11-20T10:00:00Z"));
  const auto words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  REQUIRE(ledger->dropUsageRollups().isOk());
  REQUIRE(ledger
              ->putUsageRollups(
                  {{format::usageRollupKey('h', heldAt("2026-11-20T09:00:00Z")),
                    std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size())}})
              .isOk());
  CHECK(replay::storedRollupVersion(*ledger) == 0u);
  CHECK(replay::verifyUsageRollups(*ledger).olderVersion);
  const auto old = replay::computeUsagePeriod(
      *ledger, heldAt("2026-11-20T09:00:00Z"), heldAt("2026-11-20T10:00:00Z"),
      replay::GroupBy::kClusterQueue, std::nullopt, {}, replay::ChartSteps::kOmit,
      replay::UsageSource::kRollupsWhereStored);
  CHECK_THAT(old.rollupProblem, Catch::Contains("version 0"));
  REQUIRE(replay::writeUsageRollups(*ledger) > 0);
  CHECK(replay::storedRollupVersion(*ledger) == replay::kUsageRollupVersion);
  CHECK(replay::verifyUsageRollups(*ledger).firstBad.empty());
}

TEST_CASE("held now: the state report's held rows equal a brute-force pass at every record",
          "[report][held]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  REQUIRE(ingestText(*ledger, demoStream() + outsideKueue()).errors.empty());
  const replay::Replayer replayer(*ledger);
  bool sawUncharged = false, sawOutside = false;
  for (std::uint64_t seq = 1; seq <= ledger->lastSeq(); ++seq) {
    INFO("seq " << seq);
    const replay::ClusterState s = replayer.foldTo(seq);
    const Levels brute = bruteLevels(s);
    Levels shown;
    for (const auto& h : replay::buildReport(s, {.digest = false}).held) {
      CHECK(!h.heldUnrepresentable);
      shown.held[{h.clusterQueue, h.resource}] += h.held;
      if (!h.uncharged.isZero()) shown.uncharged[{h.clusterQueue, h.resource}] += h.uncharged;
      if (h.clusterQueue == "team-b" && h.resource == "nvidia.com/gpu") {
        // job-legacy-infer's admission charges no GPU: no flavor does.
        CHECK(h.flavor == "-");
        sawUncharged = sawUncharged || !h.uncharged.isZero();
      }
      sawOutside = sawOutside || h.clusterQueue == "-";
    }
    auto nonZero = [](std::map<Key, Quantity> m) {
      std::erase_if(m, [](const auto& e) { return e.second.isZero(); });
      return m;
    };
    CHECK(nonZero(shown.held) == nonZero(brute.held));
    CHECK(nonZero(shown.uncharged) == nonZero(brute.uncharged));
  }
  CHECK(sawUncharged);
  CHECK(sawOutside);
}
