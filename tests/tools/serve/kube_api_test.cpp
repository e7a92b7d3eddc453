// The Kubernetes API over the demo ledger, without a socket: what kubectl
// would be answered, checked against the state report at the same moment.
#include "tools/serve/kube_api.h"

#include <catch2/catch.hpp>
#include <set>

#include "tests/test_support.h"
#include "tools/serve/api_error.h"
#include "tools/serve/ledger_api.h"
#include "tools/serve/watch_stream.h"
#include "tools/serve_command.h"

using namespace ledger;
using namespace ledger::serve;
using nlohmann::json;

namespace {

struct DemoApi {
  ledger::testing::TempDir dir;
  std::unique_ptr<Ledger> ledger;
  std::unique_ptr<ResourceCatalog> catalog;
  StateCache states;
  QueryRunner query = cli::answerQuery;
  AnswerCache answers{64, 64ULL << 20};

  DemoApi() {
    ledger = ledger::testing::openLedger(dir.path("l"));
    ledger::testing::ingestText(*ledger, ledger::testing::demoStream());
    catalog = std::make_unique<ResourceCatalog>(ResourceCatalog::discover(*ledger));
  }

  ApiResponse get(const std::string& path, std::multimap<std::string, std::string> query = {},
                  const std::string& accept = "application/json",
                  const std::string& method = "GET") {
    ApiRequest req;
    req.method = method;
    req.path = path;
    req.query = std::move(query);
    req.accept = accept;
    ServeContext ctx{*ledger, *catalog, states, this->query, answers, 0};
    return handleKubeRequest(req, ctx);
  }

  int errorCode(const std::string& path, std::multimap<std::string, std::string> q = {},
                const std::string& method = "GET") {
    try {
      auto res = get(path, std::move(q), "application/json", method);
      return res.status;
    } catch (const ApiError& e) {
      return e.code();
    }
  }

  json state(std::uint64_t seq) {
    QueryRequest q;
    q.command = "state";
    q.seq = seq;
    return json::parse(query(*ledger, q));
  }
};

std::set<std::string> names(const json& list) {
  std::set<std::string> out;
  for (const auto& i : list["items"]) {
    out.insert(i["metadata"].value("namespace", "") + "/" + i["metadata"].value("name", ""));
  }
  return out;
}

}  // namespace

TEST_CASE("discovery lists the stored kinds with Kueue's names and scopes") {
  DemoApi api;
  const json groups = json::parse(api.get("/at/now/apis").body);
  std::set<std::string> groupNames;
  for (const auto& g : groups["groups"]) groupNames.insert(g["name"]);
  CHECK(groupNames.count("kueue.x-k8s.io") == 1);
  CHECK(groupNames.count("quota-ledger.io") == 1);
  const json kueue = json::parse(api.get("/at/now/apis/kueue.x-k8s.io/v1beta2").body);
  bool sawCq = false, sawWl = false;
  for (const auto& r : kueue["resources"]) {
    if (r["name"] == "clusterqueues") {
      sawCq = true;
      CHECK(r["namespaced"] == false);
      CHECK(r["shortNames"] == json({"cq"}));
    }
    if (r["name"] == "workloads") {
      sawWl = true;
      CHECK(r["namespaced"] == true);
    }
  }
  CHECK(sawCq);
  CHECK(sawWl);
  CHECK(api.errorCode("/at/now/apis/nope.io/v1") == 404);
}

TEST_CASE("a list at a moment holds the objects live then, as the state report does") {
  DemoApi api;
  for (std::uint64_t seq : {10u, 25u, 44u}) {
    INFO("seq " << seq);
    const json list = json::parse(
        api.get("/at/seq:" + std::to_string(seq) + "/apis/kueue.x-k8s.io/v1beta2/workloads").body);
    std::set<std::string> want;
    const json state = api.state(seq);
    for (const auto& w : state["workloads"]) {
      want.insert(w["namespace"].get<std::string>() + "/" + w["name"].get<std::string>());
    }
    CHECK(names(list) == want);
    CHECK(list["metadata"]["resourceVersion"] == std::to_string(seq));
    CHECK(list["kind"] == "WorkloadList");
  }
}

TEST_CASE("limit and continue page through a list; a token from another moment is 400") {
  DemoApi api;
  const std::string path = "/at/seq:44/api/v1/pods";
  const json whole = json::parse(api.get(path).body);
  REQUIRE(whole["items"].size() >= 2);
  std::set<std::string> paged;
  std::string token;
  int pages = 0;
  do {
    std::multimap<std::string, std::string> q{{"limit", "1"}};
    if (!token.empty()) q.emplace("continue", token);
    const json page = json::parse(api.get(path, q).body);
    CHECK(page["items"].size() == 1);
    for (const auto& n : names(page)) paged.insert(n);
    token = page["metadata"].value("continue", "");
    ++pages;
  } while (!token.empty() && pages < 100);
  CHECK(paged == names(whole));
  CHECK(pages == static_cast<int>(whole["items"].size()));

  const json first = json::parse(api.get(path, {{"limit", "1"}}).body);
  const std::string other = first["metadata"]["continue"];
  CHECK(api.errorCode("/at/seq:30/api/v1/pods", {{"continue", other}}) == 400);
  CHECK(api.errorCode(path, {{"continue", "garbage"}}) == 400);
  CHECK(api.errorCode(path, {{"limit", "99999999999999999999999"}}) == 400);
  CHECK(api.errorCode(path, {{"limit", "ten"}}) == 400);
  CHECK(api.errorCode(path, {{"limit", "-1"}}) == 400);
}

TEST_CASE("bad requests are Status errors with the API server's codes") {
  DemoApi api;
  CHECK(api.errorCode("/at/yesterday/api/v1/pods") == 400);
  CHECK(api.errorCode("/at/seq:999/api/v1/pods") == 400);
  CHECK(api.errorCode("/at/seq:-1/api/v1/pods") == 400);
  CHECK(api.errorCode("/at/now/api/v1/frobnicators") == 404);
  // A moment and nothing after it (read past the path's segments before,
  // which serve_http_fuzz found under AddressSanitizer).
  CHECK(api.errorCode("/at/now") == 404);
  CHECK(api.errorCode("/at/seq:10/") == 404);
  // A name that is not UTF-8 is not found, not an internal error (found by
  // serve_http_fuzz).
  CHECK(api.errorCode("/at/now/api/v1/namespaces/team-a/pods/x\xff") == 404);
  CHECK(api.errorCode("/at/now/api/v1/namespaces/team-a/pods/../../secrets") == 404);
  CHECK(api.errorCode("/at/now/api/v1/namespaces/team-a/pods/x/exec") == 404);
  CHECK(api.errorCode("/at/now/apis/kueue.x-k8s.io/v1beta2/namespaces/x/clusterqueues") == 404);
  CHECK(api.errorCode("/at/now/api/v1/pods", {}, "DELETE") == 405);
  CHECK(api.errorCode("/at/now/api/v1/pods", {}, "POST") == 405);
  CHECK(api.errorCode("/at/now/api/v1/pods", {{"labelSelector", "a in (b"}}) == 400);
  CHECK(api.errorCode("/at/now/api/v1/pods", {{"fieldSelector", "spec.nodeName=x"}}) == 400);
  CHECK(api.errorCode("/at/now/api/v1/pods", {{"includeObject", "Everything"}}) == 400);

  const auto res = api.get("/at/now/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/none");
  CHECK(res.status == 404);
  const json status = json::parse(res.body);
  CHECK(status["kind"] == "Status");
  CHECK(status["message"] == "workloads.kueue.x-k8s.io \"none\" not found");
}

TEST_CASE("the Table form carries Kueue's printer columns and AGE to the moment") {
  DemoApi api;
  const json table =
      json::parse(api.get("/at/seq:44/apis/kueue.x-k8s.io/v1beta2/workloads", {},
                          "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
                      .body);
  CHECK(table["kind"] == "Table");
  std::vector<std::string> columns;
  for (const auto& c : table["columnDefinitions"]) columns.push_back(c["name"]);
  CHECK(columns ==
        std::vector<std::string>{"Name", "Queue", "Reserved in", "Admitted", "Finished", "Age"});
  REQUIRE(!table["rows"].empty());
  CHECK(table["rows"][0]["object"]["kind"] == "PartialObjectMetadata");
  // The demo's workloads were created at 08:00:00 and seq 44 is 08:50:08.
  CHECK(table["rows"][0]["cells"].back() == "50m");
}

TEST_CASE("the ledger's own resources are the state report's answers") {
  DemoApi api;
  const json usages =
      json::parse(api.get("/at/seq:44/apis/quota-ledger.io/v1alpha1/queueusages").body);
  const json state = api.state(44);
  REQUIRE(usages["items"].size() == state["clusterQueues"].size());
  for (std::size_t i = 0; i < usages["items"].size(); ++i) {
    CHECK(usages["items"][i]["metadata"]["name"] == state["clusterQueues"][i]["name"]);
    CHECK(usages["items"][i]["status"]["quotas"] == state["clusterQueues"][i]["quotas"]);
  }
  const json findings =
      json::parse(api.get("/at/seq:44/apis/quota-ledger.io/v1alpha1/ledgerfindings").body);
  CHECK(findings["items"].size() == state["findings"].size());
  const json history = json::parse(
      api.get("/at/seq:44/apis/quota-ledger.io/v1alpha1/namespaces/team-a/workloadhistories/"
              "job-train-resnet-126ec")
          .body);
  CHECK(history["status"]["recordCount"].get<int>() > 1);
}

TEST_CASE("a watch gives the objects at the moment, then the recorded changes in order") {
  DemoApi api;
  const auto res = api.get("/at/seq:10/apis/kueue.x-k8s.io/v1beta2/workloads", {{"watch", "true"}});
  REQUIRE(res.watch);
  CHECK(res.watch->afterSeq == 10);
  std::vector<std::string> events;
  const Ledger* ledger = api.ledger.get();
  WatchStream stream(
      *res.watch, [ledger] { return std::shared_ptr<const Ledger>(ledger, [](const Ledger*) {}); });
  std::string text;
  for (int i = 0; i < 3; ++i) {
    stream.next(
        [&](std::string_view bytes) {
          text.append(bytes);
          return true;
        },
        1);
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line);
    events.push_back(e["type"].get<std::string>() + " " +
                     e["object"]["metadata"]["name"].get<std::string>());
  }
  // What the stream recorded after seq 10, read back from the log.
  std::vector<std::string> want;
  REQUIRE(api.ledger
              ->scanRecords(11, 0,
                            [&](const Record& r, const Digest&) {
                              if (r.identity.kind == "Workload")
                                want.push_back(std::string(eventTypeName(r.type)) + " " +
                                               r.identity.name);
                              return true;
                            })
              .isOk());
  CHECK(!want.empty());
  CHECK(events == want);
}

TEST_CASE("/ledger/v1/report answers as ledger-query report, by any --by, up to end") {
  DemoApi api;
  auto report = [&](std::multimap<std::string, std::string> q) {
    ApiRequest req;
    req.method = "GET";
    req.path = "/ledger/v1/report";
    req.query = std::move(q);
    req.accept = "application/json";
    ServeContext ctx{*api.ledger, *api.catalog, api.states, api.query, api.answers, 0};
    return handleLedgerRequest(req, ctx);
  };
  const json j = json::parse(
      report({{"from", "2026-11-20"}, {"to", "end"}, {"by", "cluster-queue,flavor"}}).body);
  CHECK(j["by"] == "cluster-queue,flavor");
  CHECK(j["to"] == j["lastRecordAt"]);
  CHECK_FALSE(j.contains("afterLastRecord"));
  REQUIRE_FALSE(j["rows"].empty());
  CHECK(j["rows"][0].contains("clusterQueue"));
  CHECK(j["rows"][0].contains("flavor"));
  CHECK_FALSE(j["totals"].empty());
  int code = 0;
  try {
    report({{"from", "2026-11-20"}, {"to", "end"}, {"by", "local-queue"}});
  } catch (const ApiError& e) {
    code = e.code();
  }
  CHECK(code == 400);
}

// A NUL in a /ledger/v1/ question's parameter is refused by name: the
// question's own message used to end at it ("workload a/b" for "a/b\0c").
TEST_CASE("a NUL byte in a /ledger/v1/ parameter is 400 naming the parameter") {
  DemoApi api;
  ApiRequest req;
  req.method = "GET";
  req.path = "/ledger/v1/workload";
  req.query = {{"target", std::string("team-a/job\0x", 12)}};
  ServeContext ctx{*api.ledger, *api.catalog, api.states, api.query, api.answers, 0};
  try {
    handleLedgerRequest(req, ctx);
    FAIL("answered");
  } catch (const ApiError& e) {
    CHECK(e.code() == 400);
    CHECK(std::string(e.what()).find("query parameter 'target' holds a NUL byte") !=
          std::string::npos);
  }
}

TEST_CASE("/ledger/v1/why and WorkloadWhy answer as ledger-query why; errors are 400 and 404") {
  DemoApi api;
  auto why = [&](std::multimap<std::string, std::string> q) {
    ApiRequest req;
    req.method = "GET";
    req.path = "/ledger/v1/why";
    req.query = std::move(q);
    ServeContext ctx{*api.ledger, *api.catalog, api.states, api.query, api.answers, 0};
    return handleLedgerRequest(req, ctx);
  };
  QueryRequest q;
  q.command = "why";
  q.target = "team-a/job-fpga-sim-f04d2";
  const json cli = json::parse(api.query(*api.ledger, q));
  REQUIRE_FALSE(cli["intervals"].empty());
  CHECK(json::parse(why({{"workload", q.target}}).body) == cli);
  const json object =
      json::parse(api.get("/at/now/apis/quota-ledger.io/v1alpha1/namespaces/team-a/workloadwhys/"
                          "job-fpga-sim-f04d2")
                      .body);
  CHECK(object["kind"] == "WorkloadWhy");
  CHECK(object["status"]["intervals"] == cli["intervals"]);
  CHECK(object["status"]["state"] == "Pending");
  const json list = json::parse(api.get("/at/now/apis/quota-ledger.io/v1alpha1/workloadwhys").body);
  CHECK(list["items"].size() == api.state(api.ledger->lastSeq())["workloads"].size());
  auto code = [&](std::multimap<std::string, std::string> params) {
    try {
      return why(std::move(params)).status;
    } catch (const ApiError& e) {
      return e.code();
    }
  };
  CHECK(code({{"workload", "team-a/no-such-job"}}) == 404);
  CHECK(code({{"workload", "no-slash"}}) == 400);
  CHECK(code({}) == 400);
  CHECK(code({{"workload", q.target}, {"from", "yesterday"}}) == 400);
}
