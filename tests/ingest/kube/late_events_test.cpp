// Late watch events put back in time order (ingest/kube/late_events.h).
#include <catch2/catch.hpp>

#include "ingest/kube/late_events.h"
#include "schema/k8s/rfc3339.h"

using namespace ledger;
using namespace std::chrono_literals;

namespace late_events_test {

std::shared_ptr<const kube::ResolvedResource> resource(const std::string& id) {
  auto r = std::make_shared<kube::ResolvedResource>();
  r->id = id;
  return r;
}

// A MODIFIED event of `name` whose object says it changed at `changed`,
// received at `received` on a watch opened at `opened`.
kube::WatchMessage event(const std::string& id, const std::string& name, const char* changed,
                         const char* received, const char* opened) {
  kube::WatchMessage m;
  m.type = kube::WatchMessage::Type::kEvent;
  m.resource = resource(id);
  m.event.type = ingest::WatchEventType::kModified;
  m.event.object = {
      {"metadata",
       {{"name", name}, {"managedFields", nlohmann::json::array({{{"time", changed}}})}}}};
  m.receivedNs = *tryParseRfc3339(received);
  m.watchSinceNs = *tryParseRfc3339(opened);
  return m;
}

}  // namespace late_events_test

using namespace late_events_test;

TEST_CASE("a backlog is held and handed back in the order of its objects' times",
          "[ingest][observation]") {
  kube::LateEvents late(1000ms);
  const auto now = std::chrono::steady_clock::now();
  const char* opened = "2026-11-20T09:10:00Z";
  // Workloads' backlog arrives first, Pods' after it; each dates its change.
  auto w1 = event("workloads", "w1", "2026-11-20T09:02:00Z", "2026-11-20T09:10:01Z", opened);
  auto w2 = event("workloads", "w2", "2026-11-20T09:05:00Z", "2026-11-20T09:10:01Z", opened);
  auto p1 = event("pods", "p1", "2026-11-20T09:01:00Z", "2026-11-20T09:10:01Z", opened);
  auto p2 = event("pods", "p2", "2026-11-20T09:04:00Z", "2026-11-20T09:10:01Z", opened);
  // Within one resource times never go back: a later event dated earlier is
  // raised to the one before it, so its order is kept.
  auto p3 = event("pods", "p3", "2026-11-20T09:03:00Z", "2026-11-20T09:10:01Z", opened);
  for (auto* m : {&w1, &w2, &p1, &p2, &p3}) REQUIRE(late.holdIfLate(*m, now));
  CHECK(late.size() == 5);
  REQUIRE(late.deadline());
  CHECK(*late.deadline() == now + 1000ms);
  std::vector<std::string> order;
  for (const auto& h : late.take()) order.push_back(h.message.event.object["metadata"]["name"]);
  CHECK(order == std::vector<std::string>{"p1", "w1", "p2", "p3", "w2"});
  CHECK(late.empty());
  CHECK_FALSE(late.deadline());
}

TEST_CASE("a live event is never held, whatever old times its object carries",
          "[ingest][observation]") {
  kube::LateEvents late(1000ms);
  const auto now = std::chrono::steady_clock::now();
  // Changed after the watch opened: live.
  auto live =
      event("pods", "a", "2026-11-20T09:10:05Z", "2026-11-20T09:10:05Z", "2026-11-20T09:10:00Z");
  CHECK_FALSE(late.holdIfLate(live, now));
  // An old time, but received on a watch opened before it: the change itself
  // left no newer time (a deletion request); it is stamped on receipt.
  auto stale =
      event("pods", "b", "2026-11-20T09:05:00Z", "2026-11-20T09:20:00Z", "2026-11-20T09:01:00Z");
  CHECK_FALSE(late.holdIfLate(stale, now));
  // Within a second of its receipt: the object's whole seconds say nothing more.
  auto prompt =
      event("pods", "c", "2026-11-20T09:10:00Z", "2026-11-20T09:10:00.9Z", "2026-11-20T09:12:00Z");
  CHECK_FALSE(late.holdIfLate(prompt, now));
  kube::WatchMessage bookmark;
  bookmark.type = kube::WatchMessage::Type::kEvent;
  bookmark.resource = resource("pods");
  bookmark.event.type = ingest::WatchEventType::kBookmark;
  CHECK_FALSE(late.holdIfLate(bookmark, now));
  CHECK(late.empty());
}
