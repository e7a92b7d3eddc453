// The time an object gives for its own change (ingest/object_time.h).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ingest/object_time.h"
#include "schema/k8s/rfc3339.h"

using namespace ledger;
using Json = nlohmann::json;

TEST_CASE("an object's change time is the newest time it gives", "[ingest][observation]") {
  Json o = {
      {"metadata",
       {{"creationTimestamp", "2026-11-20T08:00:00Z"},
        {"managedFields",
         Json::array({{{"manager", "kube-controller"}, {"time", "2026-11-20T09:00:00Z"}},
                      {{"manager", "kueue"}, {"time", "2026-11-20T09:05:00Z"}},
                      {{"manager", "odd"}, {"time", 7}}})}}},
      {"status",
       {{"conditions",
         Json::array({{{"type", "QuotaReserved"}, {"lastTransitionTime", "2026-11-20T09:03:00Z"}},
                      {{"type", "Finished"}, {"lastTransitionTime", "bad"}}})}}}};
  CHECK(ingest::objectChangeTime(o, ingest::WatchEventType::kModified) ==
        tryParseRfc3339("2026-11-20T09:05:00Z"));
  o["status"]["conditions"][1]["lastTransitionTime"] = "2026-11-20T09:07:00Z";
  CHECK(ingest::objectChangeTime(o, ingest::WatchEventType::kModified) ==
        tryParseRfc3339("2026-11-20T09:07:00Z"));
  o["metadata"]["deletionTimestamp"] = "2026-11-20T09:09:00Z";
  CHECK(ingest::objectChangeTime(o, ingest::WatchEventType::kDeleted) ==
        tryParseRfc3339("2026-11-20T09:09:00Z"));
  // creationTimestamp counts for ADDED only: a later change of an old object
  // is not dated by its creation.
  Json created = {{"metadata", {{"creationTimestamp", "2026-11-20T08:00:00Z"}}}};
  CHECK(ingest::objectChangeTime(created, ingest::WatchEventType::kAdded) ==
        tryParseRfc3339("2026-11-20T08:00:00Z"));
  CHECK_FALSE(ingest::objectChangeTime(created, ingest::WatchEventType::kModified));
  CHECK_FALSE(ingest::objectChangeTime(Json::array(), ingest::WatchEventType::kModified));
  CHECK_FALSE(
      ingest::objectChangeTime({{"metadata", 3}, {"status", "x"}}, ingest::WatchEventType::kAdded));
}
