// Recording events: idempotency, bookmarks, error events, managedFields,
// upserts, and what the projection keeps.
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "ingest/projector.h"
#include "ledger/format.h"
#include "ledger/verify.h"
#include "schema/k8s/rfc3339.h"
#include "tests/kueue_objects.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

Json ns(const std::string& name, const std::string& rv) {
  return {
      {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", meta("", name, "uid-" + name, rv)}};
}

}  // namespace

TEST_CASE("ingesting the same stream twice appends nothing the second time", "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const std::string stream = event("ADDED", ns("a", "1"), "2026-11-01T00:00:00Z") +
                             event("MODIFIED", ns("a", "2"), "2026-11-01T00:00:01Z") +
                             event("ADDED", ns("b", "3"), "2026-11-01T00:00:02Z") +
                             event("DELETED", ns("a", "4"), "2026-11-01T00:00:03Z");
  auto first = ingestText(*ledger, stream);
  CHECK(first.stats.recorded == 4);
  CHECK(ledger->lastSeq() == 4);
  auto second = ingestText(*ledger, stream);
  CHECK(second.stats.recorded == 0);
  CHECK(second.stats.duplicates == 4);
  CHECK(ledger->lastSeq() == 4);
  // The same event inside one stream is recorded once too.
  auto third = ingestText(*ledger, event("ADDED", ns("c", "5")) + event("ADDED", ns("c", "5")));
  CHECK(third.stats.recorded == 1);
  CHECK(third.stats.duplicates == 1);
}

TEST_CASE("bare objects upsert: ADDED when unknown, MODIFIED after, duplicates skipped",
          "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, ns("a", "1").dump() + "\n");
  ingestText(*ledger, ns("a", "2").dump() + "\n" + ns("a", "2").dump() + "\n");
  Record r;
  REQUIRE(ledger->read(1, &r).isOk());
  CHECK(r.type == EventType::kAdded);
  REQUIRE(ledger->read(2, &r).isOk());
  CHECK(r.type == EventType::kModified);
  CHECK(ledger->lastSeq() == 2);
  // A manifest with no uid/resourceVersion is recorded when its content changes.
  const std::string manifest = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: m\n";
  ingestText(*ledger, manifest);
  ingestText(*ledger, manifest);
  CHECK(ledger->lastSeq() == 3);
  ingestText(*ledger, manifest + "  labels: {a: b}\n");
  CHECK(ledger->lastSeq() == 4);
  REQUIRE(ledger->read(4, &r).isOk());
  CHECK(r.type == EventType::kModified);
}

TEST_CASE("a manifest applied A, B, A records three versions, across runs", "[ingest]") {
  TempDir dir;
  // ClusterQueue quota changed 8 -> 16 -> 8, as `kubectl apply` of a
  // manifest edited and reverted; each apply is its own ledger-ingest run.
  const auto clusterQueue = [](const std::string& nominal) {
    return "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: team-a\n"
           "spec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
           "    - name: default-flavor\n      resources:\n      - name: nvidia.com/gpu\n"
           "        nominalQuota: " +
           nominal + "\n";
  };
  const std::string a = clusterQueue("8"), b = clusterQueue("16");
  {
    auto ledger = openLedger(dir.path("l"));
    CHECK(ingestText(*ledger, a).stats.recorded == 1);
    CHECK(ingestText(*ledger, a).stats.duplicates == 1);  // A, A: one version
    CHECK(ingestText(*ledger, b).stats.recorded == 1);
  }
  auto ledger = openLedger(dir.path("l"));  // a later run: only the ledger remembers B
  const auto third = ingestText(*ledger, a);
  CHECK(third.stats.recorded == 1);
  CHECK(third.stats.duplicates == 0);
  REQUIRE(ledger->lastSeq() == 3);
  Record r;
  REQUIRE(ledger->read(3, &r).isOk());
  CHECK(r.type == EventType::kModified);
  CHECK(Json::parse(r.objectJson)["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
                                 ["nominalQuota"] == 8);
  CHECK(ingestText(*ledger, a).stats.recorded == 0);
  // Within one stream too, and a version equal to the latest is skipped.
  CHECK(ingestText(*ledger, b + "---\n" + b + "---\n" + a).stats.recorded == 2);
  CHECK(ledger->lastSeq() == 5);
}

TEST_CASE("a manifest is recorded again after its deletion; a repeated deletion is not",
          "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const Json object = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "m"}}}};
  ingestText(*ledger, object.dump() + "\n" + event("DELETED", object));
  CHECK(ledger->lastSeq() == 2);
  CHECK(ingestText(*ledger, event("DELETED", object)).stats.duplicates == 1);
  CHECK(ingestText(*ledger, object.dump() + "\n").stats.recorded == 1);  // differs: a deletion
  CHECK(ingestText(*ledger, event("DELETED", object)).stats.recorded == 1);
  CHECK(ledger->lastSeq() == 4);
}

TEST_CASE("watch events with uid and resourceVersion keep the event key rule", "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  // The same content at two resourceVersions is two events; A, B, A with
  // their resourceVersions is three, and a repeat of any of them none.
  const std::string stream = event("ADDED", ns("a", "1")) + event("MODIFIED", ns("a", "2")) +
                             event("MODIFIED", ns("a", "3"));
  CHECK(ingestText(*ledger, stream).stats.recorded == 3);
  CHECK(ingestText(*ledger, event("MODIFIED", ns("a", "2"))).stats.duplicates == 1);
  CHECK(ledger->lastSeq() == 3);
}

TEST_CASE("a Kueue Configuration without metadata is recorded, cluster-wide, once", "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  // As kubernetes-sigs/kueue config/components/manager/controller_manager_config.yaml
  // is written: no metadata at all.
  const std::string config =
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nhealth:\n"
      "  healthProbeBindAddress: :8081\nleaderElection:\n  leaderElect: true\n"
      "resources:\n  deviceClassMappings:\n  - name: example.com/gpu\n"
      "    deviceClassNames: [gpu.example.com]\n";
  const auto first = ingestText(*ledger, config);
  CHECK(first.rejected == 0);
  CHECK(first.errors.empty());
  CHECK(first.stats.recorded == 1);
  REQUIRE(ledger->lastSeq() == 1);
  Record r;
  REQUIRE(ledger->read(1, &r).isOk());
  CHECK(r.identity.group == "config.kueue.x-k8s.io");
  CHECK(r.identity.version == "v1beta1");
  CHECK(r.identity.kind == "Configuration");
  CHECK(r.identity.name.empty());
  CHECK(r.identity.namespace_.empty());
  CHECK(r.type == EventType::kAdded);
  const auto again = ingestText(*ledger, config);
  CHECK(again.stats.recorded == 0);
  CHECK(again.stats.duplicates == 1);
  CHECK(ledger->lastSeq() == 1);
  // A name is taken when given; a namespace is not (the file is not namespaced).
  ingestText(*ledger,
             "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
             "metadata: {name: kueue, namespace: kueue-system}\n");
  REQUIRE(ledger->read(2, &r).isOk());
  CHECK(r.identity.name == "kueue");
  CHECK(r.identity.namespace_.empty());
  // Only this kind may go without a name.
  const auto other = ingestText(*ledger,
                                "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
                                "kind: Other\n---\napiVersion: v1\nkind: ConfigMap\n");
  CHECK(other.rejected == 2);
  CHECK(ledger->lastSeq() == 2);
}

TEST_CASE("bookmarks move the cursor and record nothing; ERROR events record nothing", "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json bookmark = {{"kind", "Namespace"}, {"metadata", {{"resourceVersion", "777"}}}};
  Json status = {{"kind", "Status"}, {"reason", "Expired"}, {"code", 410}, {"message", "too old"}};
  auto out = ingestText(
      *ledger, event("ADDED", ns("a", "1")) + event("BOOKMARK", bookmark) + event("ERROR", status),
      "src");
  CHECK(out.stats.recorded == 1);
  CHECK(out.stats.bookmarks == 1);
  CHECK(out.stats.errorEvents == 1);
  CHECK(ledger->lastSeq() == 1);
  Cursor c;
  REQUIRE(ledger->cursor("src", &c).isOk());
  CHECK(c.resourceVersion == "777");
  CHECK(c.position > 0);
}

TEST_CASE("managedFields are removed; event times are kept; missing times use the clock",
          "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  Json obj = ns("a", "1");
  obj["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  ingestText(*ledger, event("ADDED", obj, "2026-11-02T09:10:10.3Z") + event("ADDED", ns("b", "2")));
  Record r;
  REQUIRE(ledger->read(1, &r).isOk());
  CHECK(r.objectJson.find("managedFields") == std::string::npos);
  CHECK(r.timeNs == *tryParseRfc3339("2026-11-02T09:10:10.3Z"));
  REQUIRE(ledger->read(2, &r).isOk());
  // The fake clock is in 2023: raised to the previous record's time.
  CHECK(r.timeNs == *tryParseRfc3339("2026-11-02T09:10:10.3Z"));
}

TEST_CASE("bad values are rejected with their line and never lose good ones", "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  auto out = ingestText(
      *ledger,
      event("ADDED", ns("a", "1")) + "{broken\n" +
          R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Namespace","metadata":{}}})" +
          "\n" + event("ADDED", ns("b", "2")));
  CHECK(out.rejected == 2);
  CHECK(out.stats.recorded == 2);
  REQUIRE(out.errors.size() == 2);
  CHECK_THAT(out.errors[0], Catch::StartsWith("line 2"));
  CHECK_THAT(out.errors[1], Catch::StartsWith("line 3") && Catch::Contains("metadata.name"));
}

TEST_CASE("the projection can be rebuilt from the raw records", "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  ingestText(*ledger, event("ADDED", ns("a", "1")) + event("ADDED", ns("b", "2")));
  std::string before;
  REQUIRE(ledger->getRaw(format::kProjectionFamily, format::seqKey(2), &before).isOk());
  REQUIRE(
      ledger->putRawForTesting(format::kProjectionFamily, format::seqKey(2), "garbage!").isOk());
  std::uint64_t rewritten = 0;
  REQUIRE(ledger
              ->rebuildProjection(
                  [](const Record& r) { return ingest::projectJsonText(r.objectJson); }, &rewritten)
              .isOk());
  CHECK(rewritten == 2);
  std::string after;
  REQUIRE(ledger->getRaw(format::kProjectionFamily, format::seqKey(2), &after).isOk());
  CHECK(after == before);
}

namespace {

Json workloadWithCondition(const std::string& name, const std::string& transition) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Workload"},
          {"metadata", meta("ns", name, "uid-" + name, "1")},
          {"spec", {{"queueName", "lq"}, {"podSets", Json::array()}}},
          {"status",
           {{"conditions", Json::array({{{"type", "QuotaReserved"},
                                         {"status", "False"},
                                         {"reason", "Pending"},
                                         {"message", ""},
                                         {"lastTransitionTime", transition}}})}}}};
}

// The stream as ledger-ingest reads it (the reader's fast path projects) or
// as the library's default does (prepareEvent projects).
IngestOutcome ingestWith(Ledger& ledger, const std::string& text, bool fastPath) {
  std::istringstream in(text);
  ingest::IngestOptions io;
  ingest::Ingester ingester(ledger, io);
  IngestOutcome out;
  ingest::StreamOptions options;
  options.reader.projection = fastPath;
  options.onRejected = [&](const ingest::StreamRejection& r) {
    out.errors.push_back("line " + std::to_string(r.line) + ": " + r.reason);
  };
  const ingest::StreamTotals totals = ingest::ingestStream(in, "test", ingester, options);
  out.values = totals.values;
  out.rejected = totals.rejected;
  ingester.flush();
  out.stats = ingester.stats();
  return out;
}

}  // namespace

// 9999-12-31 is 2.5e20 ns since 1970, beyond int64: it used to be stored as
// 1816-03-30 (and a creationTimestamp there silently wrapped likewise).
TEST_CASE("times outside the ledger's range are rejected with their line, never wrapped",
          "[ingest][time]") {
  for (const bool fastPath : {false, true}) {
    DYNAMIC_SECTION((fastPath ? "reader projects" : "prepareEvent projects")) {
      TempDir dir;
      auto ledger = openLedger(dir.path("l"));
      Json created = ns("c", "3");
      created["metadata"]["creationTimestamp"] = "9999-12-31T23:59:59Z";
      const auto out =
          ingestWith(*ledger,
                     event("ADDED", ns("a", "1"), "2026-11-01T00:00:00Z") +
                         event("ADDED", ns("b", "2"), "9999-12-31T23:59:59Z") +
                         event("ADDED", created, "2026-11-01T00:00:01Z") +
                         event("ADDED", workloadWithCondition("w", "0001-01-01T00:00:00Z"),
                               "2026-11-01T00:00:02Z") +
                         event("ADDED", ns("d", "4"), "2262-04-11T23:47:16.854775807Z"),
                     fastPath);
      CHECK(out.rejected == 3);
      CHECK(out.stats.recorded == 2);
      REQUIRE(out.errors.size() == 3);
      CHECK_THAT(out.errors[0], Catch::StartsWith("line 2: event time '9999-12-31T23:59:59Z' is "
                                                  "outside the ledger's time range"));
      CHECK_THAT(out.errors[1], Catch::StartsWith("line 3: metadata.creationTimestamp "
                                                  "'9999-12-31T23:59:59Z' is outside"));
      CHECK_THAT(out.errors[2], Catch::StartsWith("line 4: status.conditions.lastTransitionTime "
                                                  "'0001-01-01T00:00:00Z' is outside"));
      Record r;
      REQUIRE(ledger->read(2, &r).isOk());
      CHECK(r.timeNs == std::numeric_limits<std::int64_t>::max());  // the range's last ns
    }
  }
}

// One event stamped years ahead drags every later one up to its time (times
// never go back); that used to show only as a total of times raised.
TEST_CASE("an event far ahead of the clock is flagged on its own and counted", "[ingest][time]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::istringstream in(event("ADDED", ns("a", "1"), "2026-11-01T00:00:00Z") +
                        event("ADDED", ns("b", "2"), "2026-11-01T23:00:00Z") +  // within a day
                        event("ADDED", ns("c", "3"), "2031-01-01T00:00:00Z") +
                        event("ADDED", ns("d", "4"), "2026-11-01T00:00:01Z"));
  ingest::IngestOptions io;
  io.wallClock = [] { return *tryParseRfc3339("2026-11-01T00:00:00Z"); };
  ingest::Ingester ingester(*ledger, io);
  ingest::ingestStream(in, "test", ingester, {});
  ingester.flush();
  CHECK(ingester.stats().farFuture == 1);
  CHECK(ingester.stats().timesRaised == 1);
  CHECK(ingester.stats().recorded == 4);
}

// A stream recorded ahead of this clock (a simulated month) named every one
// of its millions of events: the first few are named, the rest counted.
TEST_CASE("far-future events past the first few are counted, not named", "[ingest][time]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::string stream;
  for (int i = 0; i < 25; ++i) {
    stream += event("ADDED", ns("n" + std::to_string(i), std::to_string(i + 1)),
                    "2031-01-01T00:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "Z");
  }
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(100);
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  ingest::IngestOptions io;
  io.wallClock = [] { return *tryParseRfc3339("2026-11-01T00:00:00Z"); };
  ingest::Ingester ingester(*ledger, io);
  std::istringstream in(stream);
  ingest::ingestStream(in, "test", ingester, {});
  ingester.flush();
  spdlog::set_default_logger(previous);
  CHECK(ingester.stats().farFuture == 25);
  std::size_t named = 0, summary = 0;
  for (const auto& line : sink->last_formatted()) {
    named += line.find("ahead of the clock (2026-11-01") != std::string::npos;
    summary += line.find("are counted, not named") != std::string::npos;
  }
  CHECK(named == ingest::kFarFutureNamed);
  CHECK(summary == 1);
}

// uid and resourceVersion are unique per object only within one API server's
// kind; the key used to leave the kind out, and the second object was dropped
// as a duplicate of the first.
TEST_CASE("the same uid and resourceVersion under another kind is another event", "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const Json account = {{"apiVersion", "v1"},
                        {"kind", "ServiceAccount"},
                        {"metadata", meta("default", "a", "uid-a", "1")}};
  const std::string stream = event("ADDED", ns("a", "1")) + event("ADDED", account);
  CHECK(ingestText(*ledger, stream).stats.recorded == 2);
  CHECK(ingestText(*ledger, stream).stats.duplicates == 2);
  CHECK(ledger->lastSeq() == 2);
}

// A ledger written before the kind was in the key: its keys still make a
// re-ingest idempotent, and only for the kind they were recorded under.
TEST_CASE("dedupe keys written by earlier builds are still recognised, per kind", "[ingest]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  PendingRecord old;
  old.type = EventType::kAdded;
  old.timeNs = *tryParseRfc3339("2026-11-01T00:00:00Z");
  old.identity = ingest::identityOf(ns("a", "1"));
  old.objectJson = ns("a", "1").dump();
  old.projection = ingest::projectObject(ns("a", "1"));
  old.dedupeKey = std::string(
      "e\0uid-a\0"
      "1\0ADDED",
      15);
  AppendResult appended;
  REQUIRE(ledger->append({old}, {}, &appended).isOk());

  CHECK(ingestText(*ledger, event("ADDED", ns("a", "1"))).stats.duplicates == 1);
  const Json account = {{"apiVersion", "v1"},
                        {"kind", "ServiceAccount"},
                        {"metadata", meta("default", "a", "uid-a", "1")}};
  CHECK(ingestText(*ledger, event("ADDED", account)).stats.recorded == 1);
  CHECK(ledger->lastSeq() == 2);
}

// Both JSON parsers read an integer literal past 64 bits as a double of 17
// digits: a bare nominalQuota of 10^23 + 1 was stored and reported as
// 1.0000000000000001e+23, and a count was cast into its field wrapped. A
// quantity keeps every digit, as the same value quoted does; an integer
// field cannot hold such a value, so its event is rejected with its line.
TEST_CASE("integers past their range: a quantity keeps its digits, a count rejects its event",
          "[ingest][numbers]") {
  const auto bare = [](const Json& object, const std::string& placeholder,
                       const std::string& literal) {
    std::string line = event("ADDED", object);
    line.replace(line.find("\"" + placeholder + "\""), placeholder.size() + 2, literal);
    return line;
  };
  const Json cq = k8s::clusterQueue("cq", "v1beta2", "", {{"f", {{"cpu", "QUOTA"}}}});
  const Json tmpl =
      k8s::claimTemplate("ns", "t", Json::array({k8s::exactRequest("r", "gpu", {{"count", "N"}})}));
  Json wl = k8s::workload("ns", "w", "lq", Json::array({k8s::podSet("main", 1, Json::object())}));
  wl["spec"]["podSets"][0]["count"] = 4294967297LL;
  for (const bool fastPath : {false, true}) {
    DYNAMIC_SECTION((fastPath ? "reader projects" : "prepareEvent projects")) {
      TempDir dir;
      auto ledger = openLedger(dir.path("l"));
      const auto out = ingestWith(*ledger,
                                  bare(cq, "QUOTA", "100000000000000000000001") +
                                      bare(tmpl, "N", "18446744073709551617") +
                                      bare(tmpl, "N", "9223372036854775808") + event("ADDED", wl),
                                  fastPath);
      REQUIRE(out.errors.size() == 3);
      CHECK(out.stats.recorded == 1);
      CHECK_THAT(out.errors[0], Catch::StartsWith("line 2: requests.count 18446744073709551617 "
                                                  "is outside the int64 range"));
      CHECK_THAT(out.errors[1], Catch::StartsWith("line 3: requests.count 9223372036854775808 "
                                                  "is outside the int64 range"));
      CHECK_THAT(out.errors[2], Catch::StartsWith("line 4: spec.podSets.count 4294967297 is "
                                                  "outside the int32 range"));
      Record r;
      REQUIRE(ledger->read(1, &r).isOk());
      CHECK_THAT(r.objectJson, Catch::Contains("100000000000000000000001"));
      const replay::StateReport report = reportOf(*ledger);
      REQUIRE(report.clusterQueues.size() == 1);
      REQUIRE(report.clusterQueues[0].quotas.size() == 1);
      CHECK(report.clusterQueues[0].quotas[0].nominal.toString() == "100000000000000000000001");
    }
  }
}

TEST_CASE("a ledger copied record by record has the source's chain and verifies in full",
          "[fleet][ingest]") {
  // What the fleet consumer does with each shipped record: the copy's
  // seqs, hashes and derived families are the source's.
  TempDir dir;
  auto source = openLedger(dir.path("source"));
  std::string text = demoStream();
  // A manifest without uid or resourceVersion (a live digest) and its deletion.
  text +=
      R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"plain"},"data":{"a":"1"}}})"
      "\n";
  text +=
      R"({"type":"DELETED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"plain"},"data":{"a":"1"}}})"
      "\n";
  const IngestOutcome outcome = ingestText(*source, text);
  REQUIRE(outcome.rejected == 0);
  REQUIRE(source->lastSeq() > 10);

  auto copy = openLedger(dir.path("copy"));
  std::vector<PendingRecord> batch;
  std::vector<Digest> hashes;
  Digest previous{};
  Sha256 hasher;
  REQUIRE(source
              ->scanLogBytes(1, 0,
                             [&](std::uint64_t seq, const Digest& stored, std::string_view bytes) {
                               CHECK(chainHash(previous, bytes, hasher) == stored);
                               previous = stored;
                               Record r;
                               REQUIRE(decodeRecord(bytes, &r).isOk());
                               CHECK(r.seq == seq);
                               batch.push_back(ingest::pendingRecordOf(std::move(r), {}));
                               hashes.push_back(stored);
                               return true;
                             })
              .isOk());
  AppendResult result;
  REQUIRE(copy->append(batch, {}, &result).isOk());
  CHECK(result.firstSeq == 1);
  CHECK(copy->lastSeq() == source->lastSeq());
  CHECK(copy->lastHash() == source->lastHash());
  VerifyOptions vo;
  vo.project = [](const Record& r) { return ingest::projectJsonText(r.objectJson, {}); };
  vo.dedupeKey = ingest::dedupeKeyOf;
  vo.legacyDedupeKeys = ingest::legacyDedupeKeysOf;
  VerifyReport report;
  REQUIRE(verifyLog(*copy, &report, vo).isOk());
  INFO(report.problem);
  CHECK(report.ok());
}
