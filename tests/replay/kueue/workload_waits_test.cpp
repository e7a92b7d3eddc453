// ledger-query waits: hand-made workloads whose waits are known (created,
// requeued by a lost reservation, requeued by the Requeued condition, still
// pending), and a simulated cluster's waits against a brute-force pass over
// the log written here: every workload's records gathered by uid first, then
// each period's admissions, waits, percentiles (by their definition: the
// smallest sample at or above which p percent of the samples lie) and
// pending workloads read off them.
#include "replay/kueue/workload_waits.h"

#include <algorithm>
#include <map>
#include <vector>

#include "replay/kueue/workload_usage.h"
#include "schema/k8s/rfc3339.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"
#include "tests/tools/sim_stream.h"

using namespace ledger;
using namespace ledger::testing;

namespace workload_waits_test {

using Json = nlohmann::json;

constexpr std::int64_t kSecond = 1'000'000'000;

Json condition(const std::string& type, const std::string& status, const std::string& time) {
  return {{"type", type},
          {"status", status},
          {"reason", type},
          {"message", ""},
          {"lastTransitionTime", time}};
}

Json pending(const std::string& ns, const std::string& name, const std::string& queue) {
  return k8s::workload(
      ns, name, queue,
      Json::array({k8s::podSet(
          "main", 1, {{"containers", Json::array({k8s::container("c", {{"cpu", "1"}})})}})}));
}

Json admittedTo(const Json& wl, const std::string& cq) {
  return k8s::admitted(wl, cq, "default", {{"cpu", "1"}});
}

// The events in time order, as a watch delivers them.
class Stream {
 public:
  Stream& operator+=(std::pair<std::string, std::string> e) {
    events_.push_back(std::move(e));
    return *this;
  }
  std::string text() {
    std::stable_sort(events_.begin(), events_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string out;
    for (const auto& e : events_) out += e.second;
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> events_;
};

// Each event its own resourceVersion: the ingester drops a repeated one.
std::pair<std::string, std::string> timed(const std::string& type, Json object,
                                          const std::string& time) {
  static int resourceVersion = 100;
  object["metadata"]["resourceVersion"] = std::to_string(++resourceVersion);
  return {time, event(type, object, time)};
}

// Creation 00:00:00 for every workload (k8s::metadata's default).
std::string handMade() {
  Stream s;
  s += timed("ADDED", k8s::localQueue("a", "lq", "cq"), "2026-11-01T00:00:01Z");
  s += timed("ADDED", k8s::localQueue("b", "lq2", "cq2"), "2026-11-01T00:00:01Z");
  // w1 waits 100 s.
  s += timed("ADDED", pending("a", "w1", "lq"), "2026-11-01T00:00:10Z");
  s += timed("MODIFIED", admittedTo(pending("a", "w1", "lq"), "cq"), "2026-11-01T00:01:40Z");
  // w2 waits 30 s, loses its reservation at 00:05:00, waits 45 s more.
  s += timed("ADDED", pending("a", "w2", "lq"), "2026-11-01T00:00:10Z");
  s += timed("MODIFIED", admittedTo(pending("a", "w2", "lq"), "cq"), "2026-11-01T00:00:30Z");
  Json evicted = pending("a", "w2", "lq");
  evicted["status"]["conditions"] =
      Json::array({condition("QuotaReserved", "False", "2026-11-01T00:05:00Z"),
                   condition("Evicted", "True", "2026-11-01T00:05:00Z")});
  s += timed("MODIFIED", evicted, "2026-11-01T00:05:00Z");
  s += timed("MODIFIED", admittedTo(pending("a", "w2", "lq"), "cq"), "2026-11-01T00:05:45Z");
  // w3's Requeued condition says 00:09:00: it waits 60 s.
  s += timed("ADDED", pending("a", "w3", "lq"), "2026-11-01T00:00:10Z");
  Json requeued = admittedTo(pending("a", "w3", "lq"), "cq");
  requeued["status"]["conditions"].push_back(condition("Requeued", "True", "2026-11-01T00:09:00Z"));
  s += timed("MODIFIED", requeued, "2026-11-01T00:10:00Z");
  // Still pending at the end: w4 (cq through lq), w5 (cq2 through lq2).
  s += timed("ADDED", pending("a", "w4", "lq"), "2026-11-01T00:00:20Z");
  s += timed("ADDED", pending("b", "w5", "lq2"), "2026-11-01T00:00:20Z");
  // Admitted and finished before the end: neither pending nor waiting again.
  s += timed("ADDED", pending("b", "w6", "lq2"), "2026-11-01T00:00:20Z");
  s += timed("MODIFIED", k8s::finished(admittedTo(pending("b", "w6", "lq2"), "cq2")),
             "2026-11-01T00:00:50Z");
  // Admitted before the ledger saw it: no wait measured.
  s += timed("ADDED", admittedTo(pending("b", "w7", "lq2"), "cq2"), "2026-11-01T00:00:20Z");
  return s.text();
}

std::int64_t waitsAt(const std::string& text) {
  const auto ns = tryParseRfc3339(text);
  REQUIRE(ns);
  return *ns;
}

const replay::WaitGroup* group(const replay::WaitsReport& r, const std::string& key) {
  for (const auto& g : r.groups) {
    if (g.key == key) return &g;
  }
  return nullptr;
}

std::vector<std::int64_t> seconds(std::initializer_list<std::int64_t> s) {
  std::vector<std::int64_t> out;
  for (auto v : s) out.push_back(v * kSecond);
  return out;
}

// ---- the brute-force pass

struct Seen {
  std::int64_t t = 0;
  bool deleted = false;
  replay::WorkloadConditions conditions;
  std::int64_t requeuedNs = 0, creationNs = 0;
  std::string ns, localQueue, clusterQueue;
};

struct Log {
  std::map<std::string, std::vector<Seen>> workloads;  // by uid
  // LocalQueue ns/name -> (time, ClusterQueue; empty once deleted)
  std::map<std::string, std::vector<std::pair<std::int64_t, std::string>>> localQueues;
};

Log readLog(const Ledger& ledger) {
  Log log;
  REQUIRE(ledger
              .scanProjections(
                  1, ledger.lastSeq(),
                  [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
                    const auto body = r.getObject().getBody();
                    const bool deleted = r.getType() == schema::EventType::DELETED;
                    const std::string ns = r.getIdentity().getNamespace().cStr();
                    if (body.isLocalQueue()) {
                      log.localQueues[ns + "/" + r.getIdentity().getName().cStr()].emplace_back(
                          r.getTimeNs(),
                          deleted ? "" : body.getLocalQueue().getClusterQueue().cStr());
                    }
                    if (!body.isWorkload()) return true;
                    Seen s;
                    s.t = r.getTimeNs();
                    s.deleted = deleted;
                    s.ns = ns;
                    s.creationNs = r.getObject().getCreationNs();
                    auto wl = body.getWorkload();
                    s.conditions = replay::conditionsOf(wl);
                    for (auto c : wl.getConditions()) {
                      if (c.getType() == "Requeued") s.requeuedNs = c.getLastTransitionNs();
                    }
                    s.localQueue = wl.getQueueName().cStr();
                    s.clusterQueue = wl.getAdmissionClusterQueue().cStr();
                    log.workloads[r.getIdentity().getUid().cStr()].push_back(s);
                    return true;
                  })
              .isOk());
  return log;
}

struct Expected {
  std::vector<std::int64_t> waits;
  std::uint64_t pending = 0;
};

// Per ClusterQueue; counts the admissions that followed a lost reservation.
std::map<std::string, Expected> bruteForce(const Log& log, std::int64_t from, std::int64_t to,
                                           std::size_t* afterLoss) {
  std::map<std::string, Expected> out;
  for (const auto& [uid, seen] : log.workloads) {
    std::int64_t lost = 0, requeued = 0;
    const Seen* last = nullptr;
    for (std::size_t i = 0; i < seen.size() && seen[i].t < to; ++i) {
      const Seen& s = seen[i];
      requeued = std::max(requeued, s.requeuedNs);
      if (i > 0 && !s.deleted && seen[i - 1].conditions.quotaReserved &&
          !s.conditions.quotaReserved && !s.conditions.finished) {
        lost = s.t;
      }
      if (i > 0 && !s.deleted && !seen[i - 1].deleted && !seen[i - 1].conditions.admitted &&
          s.conditions.admitted && s.t >= from) {
        const std::int64_t created = s.creationNs != 0 ? s.creationNs : seen[0].t;
        out[s.clusterQueue].waits.push_back(
            std::max<std::int64_t>(0, s.t - std::max({created, lost, requeued})));
        if (lost != 0) ++*afterLoss;
      }
      last = &s;
    }
    if (last == nullptr || last->deleted || last->conditions.admitted ||
        last->conditions.finished) {
      continue;
    }
    std::string cq = last->clusterQueue;
    if (cq.empty()) {
      auto it = log.localQueues.find(last->ns + "/" + last->localQueue);
      if (it != log.localQueues.end()) {
        for (const auto& [t, name] : it->second) {
          if (t < to) cq = name;
        }
      }
    }
    ++out[cq].pending;
  }
  for (auto& [cq, e] : out) std::sort(e.waits.begin(), e.waits.end());
  return out;
}

// The smallest sample v with at least p percent of the samples <= v.
std::int64_t percentileByDefinition(const std::vector<std::int64_t>& sorted, int p) {
  for (const std::int64_t v : sorted) {
    const auto atOrBelow = static_cast<std::size_t>(
        std::count_if(sorted.begin(), sorted.end(), [&](std::int64_t x) { return x <= v; }));
    if (atOrBelow * 100 >= static_cast<std::size_t>(p) * sorted.size()) return v;
  }
  FAIL("no sample");
  return 0;
}

}  // namespace workload_waits_test

using namespace workload_waits_test;

TEST_CASE("nearest-rank percentiles", "[waits]") {
  CHECK_FALSE(replay::nearestRank({}, 50));
  CHECK(replay::nearestRank({7}, 50) == 7);
  CHECK(replay::nearestRank({7}, 95) == 7);
  std::vector<std::int64_t> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(replay::nearestRank(ten, 50) == 5);
  CHECK(replay::nearestRank(ten, 95) == 10);
  CHECK(replay::nearestRank(ten, 100) == 10);
  std::vector<std::int64_t> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  CHECK(replay::nearestRank(twenty, 95) == 19);
  CHECK(replay::nearestRank(twenty, 50) == 10);
}

TEST_CASE("waits of hand-made workloads", "[waits]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  REQUIRE(ingestText(*ledger, handMade()).rejected == 0);
  const std::int64_t from = waitsAt("2026-11-01T00:00:00Z"), to = waitsAt("2026-11-01T01:00:00Z");

  auto r = replay::workloadWaits(*ledger, from, to, replay::WaitGrouping::kClusterQueue);
  REQUIRE(r.groups.size() == 2);
  const auto* cq = group(r, "cq");
  REQUIRE(cq != nullptr);
  CHECK(cq->waitsNs == seconds({30, 45, 60, 100}));
  CHECK(cq->stillPending == 1);
  CHECK(replay::nearestRank(cq->waitsNs, 50) == 45 * kSecond);
  CHECK(replay::nearestRank(cq->waitsNs, 95) == 100 * kSecond);
  const auto* cq2 = group(r, "cq2");
  REQUIRE(cq2 != nullptr);
  CHECK(cq2->waitsNs == seconds({50}));
  CHECK(cq2->stillPending == 1);

  // The period starts after w2's first admission; w2's second counts.
  r = replay::workloadWaits(*ledger, waitsAt("2026-11-01T00:01:00Z"), to,
                            replay::WaitGrouping::kClusterQueue);
  CHECK(group(r, "cq")->waitsNs == seconds({45, 60, 100}));
  // The period ends before w1's admission: w1 is still pending then.
  r = replay::workloadWaits(*ledger, from, waitsAt("2026-11-01T00:01:00Z"),
                            replay::WaitGrouping::kClusterQueue);
  CHECK(group(r, "cq")->waitsNs == seconds({30}));
  CHECK(group(r, "cq")->stillPending == 3);  // w1, w3, w4

  r = replay::workloadWaits(*ledger, from, to, replay::WaitGrouping::kNamespace);
  REQUIRE(group(r, "a") != nullptr);
  CHECK(group(r, "a")->waitsNs.size() == 4);
  CHECK(group(r, "b")->stillPending == 1);
  r = replay::workloadWaits(*ledger, from, to, replay::WaitGrouping::kLocalQueue);
  REQUIRE(group(r, "b/lq2") != nullptr);
  CHECK(group(r, "a/lq")->waitsNs.size() == 4);

  CHECK(replay::parseWaitGrouping("local-queue") == replay::WaitGrouping::kLocalQueue);
  CHECK_THROWS_AS(replay::parseWaitGrouping("flavor"), std::invalid_argument);
}

TEST_CASE("a simulated cluster's waits are the brute-force pass's", "[generator][waits]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  REQUIRE(ingestText(*ledger, simulatedStream(3, 3000), "test", 500).rejected == 0);
  const Log log = readLog(*ledger);
  std::int64_t first = 0, last = 0;
  REQUIRE(ledger->timeOf(1, &first).isOk());
  REQUIRE(ledger->timeOf(ledger->lastSeq(), &last).isOk());
  const std::int64_t third = (last - first) / 3;
  std::size_t admissions = 0, afterLoss = 0, pendingAtEnd = 0;
  for (const auto& [from, to] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {first, last + 1}, {first + third, first + 2 * third}, {first + third, last + 1}}) {
    const auto expected = bruteForce(log, from, to, &afterLoss);
    const auto got = replay::workloadWaits(*ledger, from, to, replay::WaitGrouping::kClusterQueue);
    REQUIRE(got.groups.size() == expected.size());
    for (const auto& g : got.groups) {
      INFO("ClusterQueue " << g.key);
      REQUIRE(expected.count(g.key) == 1);
      const Expected& e = expected.at(g.key);
      CHECK(g.waitsNs == e.waits);
      CHECK(g.stillPending == e.pending);
      admissions += e.waits.size();
      pendingAtEnd += e.pending;
      if (e.waits.empty()) continue;
      for (const int p : {50, 95, 100}) {
        CHECK(replay::nearestRank(g.waitsNs, p) == percentileByDefinition(e.waits, p));
      }
    }
  }
  // The cluster exercised what the definition covers.
  CHECK(admissions > 100);
  CHECK(afterLoss > 0);
  CHECK(pendingAtEnd > 0);
}
