// One snapshot of the cluster from the LISTs of several resources
// (ingest/kube/snapshot_tracker.h).
#include <catch2/catch.hpp>

#include "ingest/kube/snapshot_tracker.h"
#include "ingest/kube/watch_message.h"

using namespace ledger;
using namespace std::chrono_literals;

namespace snapshot_tracker_test {

const std::string kWorkloadsId = "kueue.x-k8s.io/workloads";
const std::string kClassesId = "resource.k8s.io/deviceclasses";
const std::string kTemplatesId = "resource.k8s.io/resourceclaimtemplates";

kube::WatchMessage message(const std::string& id) {
  auto r = std::make_shared<kube::ResolvedResource>();
  r->id = id;
  kube::WatchMessage m;
  m.resource = std::move(r);
  return m;
}

}  // namespace snapshot_tracker_test

using namespace snapshot_tracker_test;

TEST_CASE("Workloads wait until every other LIST of the snapshot has ended",
          "[ingest][observation]") {
  kube::SnapshotTracker t(60s);
  const auto now = std::chrono::steady_clock::now();
  t.expect({kWorkloadsId, kClassesId, kTemplatesId}, now);
  // The Workloads' LIST came back first: it waits.
  CHECK(t.defers(kWorkloadsId, now));
  CHECK_FALSE(t.defers(kClassesId, now));
  t.defer(message(kWorkloadsId));
  auto added = t.begin(kClassesId, 1000, 1, now);
  REQUIRE(added);
  CHECK((*added)["kind"] == "Snapshot");
  CHECK((*added)["spec"]["reason"] == "first-sync");
  CHECK(t.releasable(now).empty());
  t.ended(kClassesId, "10", 3, 0);
  CHECK(t.releasable(now).empty());  // the templates are still expected
  t.settled(kTemplatesId);           // resumed its watch: nothing to wait for
  CHECK_FALSE(t.defers(kWorkloadsId, now));
  CHECK(t.releasable(now).size() == 1);
  CHECK_FALSE(t.closing(5, 2000, now, false));       // the Workloads have not listed yet
  CHECK_FALSE(t.begin(kWorkloadsId, 1500, 6, now));  // joins the open snapshot
  t.ended(kWorkloadsId, "12", 2, 1);
  auto closed = t.closing(9, 2000, now, false);
  REQUIRE(closed);
  CHECK((*closed)["status"]["firstSeq"] == 1);
  CHECK((*closed)["status"]["lastSeq"] == 9);
  CHECK((*closed)["status"]["resources"].size() == 2);
  CHECK((*closed)["status"]["missing"].empty());
  CHECK((*closed)["status"]["gaps"].empty());
  CHECK_FALSE(t.open());
}

TEST_CASE("a snapshot stops waiting after its wait and names what is missing",
          "[ingest][observation]") {
  kube::SnapshotTracker t(100ms);
  const auto start = std::chrono::steady_clock::now();
  t.expect({kWorkloadsId, kClassesId, kTemplatesId}, start);
  REQUIRE(t.begin(kClassesId, 1000, 1, start));
  t.ended(kClassesId, "10", 3, 0);
  t.defer(message(kWorkloadsId));
  CHECK(t.defers(kWorkloadsId, start));
  const auto late = start + 200ms;
  CHECK_FALSE(t.defers(kWorkloadsId, late));
  CHECK(t.releasable(late).size() == 1);
  CHECK_FALSE(t.begin(kWorkloadsId, 1500, 4, late));
  t.ended(kWorkloadsId, "12", 2, 0);
  auto closed = t.closing(7, 3000, late, false);
  REQUIRE(closed);
  CHECK((*closed)["status"]["missing"] == nlohmann::json::array({kTemplatesId}));
}

TEST_CASE("relists after a gap: one gap per start, ending at the last relist",
          "[ingest][observation]") {
  kube::SnapshotTracker t(60s);
  const auto now = std::chrono::steady_clock::now();
  REQUIRE(t.begin(kClassesId, 5000, 10, now));
  t.noteGap(kClassesId, 1000, 5000, "expired");
  CHECK_FALSE(t.begin(kWorkloadsId, 5100, 12, now));
  t.noteGap(kWorkloadsId, 1000, 5100, "expired");
  CHECK(t.gapFrom(kWorkloadsId) == 1000);
  CHECK_FALSE(t.gapFrom(kTemplatesId));
  t.ended(kClassesId, "20", 1, 0);
  t.ended(kWorkloadsId, "21", 1, 0);
  auto closed = t.closing(14, 6000, now, false);
  REQUIRE(closed);
  CHECK((*closed)["spec"]["reason"] == "relist");
  const auto& gaps = (*closed)["status"]["gaps"];
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0]["resources"].size() == 2);
  CHECK(gaps[0]["to"] == "1970-01-01T00:00:00.0000051Z");
}
