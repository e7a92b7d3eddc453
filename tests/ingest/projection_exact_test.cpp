// Ingest projects objects straight from simdjson's DOM (JsonView,
// ValueReader::Options::projection) and keeps of the nlohmann value only what
// normalizeValue() and the Ingester read. Both must be invisible: the view
// answers as nlohmann's value would, and the reader's projection of each
// object is the projector's projection of the whole nlohmann object - on a
// simulated cluster's objects, on the same objects with fields of the wrong
// type and duplicate keys, and on the forms the reader must leave whole.
#include <capnp/serialize.h>

#include <cstring>
#include <functional>
#include <random>

#include "ingest/json_view.h"
#include "ingest/projector.h"
#include "ingest/watch_event.h"
#include "schema/projection.capnp.h"
#include "tests/test_support.h"
#include "tools/generator/cluster_sim.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

// Compares a view with the nlohmann value of the same text, recursively.
void checkSame(const ingest::JsonView& v, const Json& j) {
  REQUIRE(v.is_object() == j.is_object());
  REQUIRE(v.is_array() == j.is_array());
  CHECK(v.is_string() == j.is_string());
  CHECK(v.is_null() == j.is_null());
  CHECK(v.is_boolean() == j.is_boolean());
  CHECK(v.is_number_integer() == j.is_number_integer());
  CHECK(v.is_number_unsigned() == j.is_number_unsigned());
  CHECK(v.is_number_float() == j.is_number_float());
  CHECK(v.size() == j.size());
  CHECK(v.empty() == j.empty());
  CHECK(v.dump() == j.dump());
  if (j.is_number_integer()) {
    CHECK(v.get<std::int64_t>() == j.get<std::int64_t>());
    CHECK(v.get<std::uint64_t>() == j.get<std::uint64_t>());
  }
  if (j.is_string()) CHECK(v.get<std::string>() == j.get<std::string>());
  if (j.is_boolean()) CHECK(v.get<bool>() == j.get<bool>());
  if (j.is_object()) {
    const auto items = v.items();
    REQUIRE(items.size() == j.size());
    std::size_t i = 0;
    for (auto it = j.begin(); it != j.end(); ++it, ++i) {
      CHECK(items[i].first == it.key());
      checkSame(items[i].second, it.value());
      const auto found = v.find(it.key());
      REQUIRE(found.has_value());
      CHECK(found->dump() == it.value().dump());
    }
    CHECK_FALSE(v.find("no such key").has_value());
    CHECK_FALSE(v.begin() != v.end());  // arrays only
  } else if (j.is_array()) {
    std::size_t i = 0;
    for (const ingest::JsonView element : v) checkSame(element, j.at(i++));
    CHECK(i == j.size());
    CHECK(v.items().empty());
    CHECK_FALSE(v.find("k").has_value());
  }
}

void checkViewOf(const std::string& text) {
  INFO(text);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(text).get(root) == simdjson::SUCCESS);
  checkSame(ingest::JsonView(root), Json::parse(text));
}

// The object the Ingester records for `event`, whole, from nlohmann's parse
// of the same line, with metadata.managedFields erased as prepareEvent does.
Json wholeObject(const std::string& line) {
  const auto normalized = ingest::normalizeValue(Json::parse(line));
  REQUIRE(normalized.events.size() == 1);
  Json object = normalized.events.front().object;
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    meta->erase("managedFields");
  return object;
}

std::string problemsOf(const std::string& projection) {
  auto words = kj::heapArray<capnp::word>(projection.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), projection.data(), words.size() * sizeof(capnp::word));
  capnp::FlatArrayMessageReader reader(words);
  std::string out;
  for (auto p : reader.getRoot<schema::Projection>().getProblems()) out += std::string(p) + ";";
  return out;
}

struct ReaderCheck {
  std::size_t values = 0;     // values read
  std::size_t projected = 0;  // with a projection from the reader
  // Whose object the projector rejects (an integer field out of its range,
  // json_fields.h): the reader leaves those to prepareEvent, which rejects.
  std::size_t rejected = 0;
};

// Reads `lines` as ledger-ingest does and checks, for each event: the
// reader's projection (when it made one) against projectObject() of the
// whole object; that the partial value normalizes with the same errors,
// identity and stored JSON; that it holds nothing but apiVersion, kind and
// metadata's name, namespace, uid and resourceVersion.
ReaderCheck checkReader(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  std::istringstream in(text);
  ingest::ValueReader::Options options;
  options.projection = true;
  ingest::ValueReader reader(in, options);
  ingest::DecodedValue v;
  ReaderCheck out;
  while (reader.next(&v)) {
    REQUIRE(out.values < lines.size());
    const std::string& line = lines[out.values++];
    INFO(line);
    REQUIRE(v.error.empty());
    const bool projected = !v.projection.empty();
    if (projected) {
      CHECK_FALSE(v.storedObjectJson.empty());
      ++out.projected;
    }
    auto fast = ingest::normalizeValue(std::move(v.value));
    const auto reference = ingest::normalizeValue(Json::parse(line));
    REQUIRE(fast.errors == reference.errors);
    REQUIRE(fast.events.size() == reference.events.size());
    if (fast.events.empty()) continue;
    if (!projected && fast.events.size() == 1) {
      std::string rejection;
      ingest::projectObject(wholeObject(line), {}, &rejection);
      if (!rejection.empty()) ++out.rejected;
    }
    if (projected) {
      REQUIRE(fast.events.size() == 1);
      const Json& partial = fast.events.front().object;
      for (auto it = partial.begin(); it != partial.end(); ++it) {
        CHECK((it.key() == "apiVersion" || it.key() == "kind" || it.key() == "metadata"));
      }
      if (auto meta = partial.find("metadata"); meta != partial.end() && meta->is_object()) {
        for (auto it = meta->begin(); it != meta->end(); ++it) {
          CHECK((it.key() == "name" || it.key() == "namespace" || it.key() == "uid" ||
                 it.key() == "resourceVersion"));
        }
      }
      const Json whole = wholeObject(line);
      CHECK(ingest::identityOf(partial).objectKey() == ingest::identityOf(whole).objectKey());
      CHECK(ingest::identityOf(partial).uid == ingest::identityOf(whole).uid);
      CHECK(ingest::identityOf(partial).resourceVersion ==
            ingest::identityOf(whole).resourceVersion);
      CHECK(v.storedObjectJson == whole.dump());
      const std::string expected = ingest::projectObject(whole);
      CHECK(problemsOf(v.projection) == problemsOf(expected));
      CHECK(v.projection == expected);
    }
  }
  CHECK(out.values == lines.size());
  return out;
}

std::vector<std::string> simulatedLines(std::uint64_t events, std::uint64_t seed) {
  gen::SimOptions options;
  options.events = events;
  options.seed = seed;
  options.nodes = 8;
  options.queues = 4;
  gen::ClusterSim sim(options);
  std::vector<std::string> lines;
  std::string line;
  while (sim.next(&line)) lines.push_back(line);
  return lines;
}

// A JSON value of a random type, for fields of the wrong type.
std::string oddValue(std::mt19937& rng) {
  const char* const values[] = {
      "null", "true",      "7",  "-3", "18446744073709551615",  "2.5",
      "1e2",  R"("text")", "[]", "{}", R"([1,"a",{"b":null}])", R"({"x":{"y":[true]}})"};
  return values[rng() % std::size(values)];
}

// Replaces the value of one randomly chosen member somewhere inside `value`
// (not the identity: apiVersion, kind and metadata stay) with an odd one.
void mutate(Json& value, std::mt19937& rng, int depth) {
  if (value.is_object() && !value.empty()) {
    auto it = value.begin();
    std::advance(it, static_cast<long>(rng() % value.size()));
    if (depth == 0 && (it.key() == "apiVersion" || it.key() == "kind" || it.key() == "metadata"))
      return;
    if (depth < 6 && (it->is_object() || it->is_array()) && rng() % 4 != 0) {
      mutate(*it, rng, depth + 1);
    } else {
      *it = Json::parse(oddValue(rng));
    }
  } else if (value.is_array() && !value.empty()) {
    Json& element = value.at(rng() % value.size());
    if (depth < 6 && (element.is_object() || element.is_array()) && rng() % 4 != 0) {
      mutate(element, rng, depth + 1);
    } else {
      element = Json::parse(oddValue(rng));
    }
  }
}

}  // namespace

TEST_CASE("JsonView answers as nlohmann's value of the same text", "[projection]") {
  checkViewOf(R"({"dup":1,"b":[1,2],"dup":"last","a":{"z":1,"y":{"q":[]},"z":null}})");
  checkViewOf(R"({"i":[0,1,-1,9223372036854775807,9223372036854775808,18446744073709551615]})");
  checkViewOf(R"({"d":[0.0,1.0,1e2,-1e-2,2.5e+3,1e308,4.9e-324,0.1],"t":true,"f":false})");
  checkViewOf(R"({"s":"\u0000\u001f \" \\ \/ \u00e9 é","":"","k\u0001":{}})");
  checkViewOf(R"([{"kind":"Pod"},[],{},null,"x",3])");
  checkViewOf(R"({"b":{"x":1},"a":2,"b":{"y":2},"c":[{"k":1,"k":2}]})");
  // Random documents of every type, without the spellings the fast path
  // leaves to nlohmann (negative zeros, escaped surrogates).
  std::mt19937 rng(20261130);
  int checked = 0;
  while (checked < 1500) {
    std::string doc = R"({"a":)" + oddValue(rng) + R"(,"b":)";
    doc += checked % 2 == 0 ? oddValue(rng) : std::string(R"({"x":)") + oddValue(rng) + "}";
    doc += R"(,"a":)" + oddValue(rng) + "}";
    checkViewOf(doc);
    ++checked;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(std::string(R"({"n":5,"s":"x"})")).get(root) == simdjson::SUCCESS);
  const ingest::JsonView view(root);
  // value() reads strings only; nlohmann would throw for the number.
  CHECK(view.value("n", "fallback") == "fallback");
  CHECK(view.value("s", "fallback") == "x");
  CHECK(view.value("absent", "fallback") == "fallback");
}

TEST_CASE("viewOfNlohmann reads what nlohmann wrote", "[projection]") {
  const Json value = Json::parse(R"({"b":[1,-2,2.5,18446744073709551615],"a":{"c":"é"}})");
  simdjson::dom::parser parser;
  const ingest::JsonView view = ingest::viewOfNlohmann(value, parser);
  checkSame(view, value);
  // Not valid UTF-8 (a value built from YAML, not parsed from JSON).
  Json odd = Json::object();
  odd["s"] = std::string(
      "a\xFF"
      "b");
  CHECK(ingest::viewOfNlohmann(odd, parser).find("s")->get<std::string>() ==
        "a\xEF\xBF\xBD"
        "b");
}

TEST_CASE("the reader's projection is the projector's: a simulated cluster", "[projection]") {
  const auto lines = simulatedLines(3000, 7);
  const ReaderCheck result = checkReader(lines);
  // Every line of the simulation is an ADDED, MODIFIED or DELETED event.
  CHECK(result.projected == lines.size());
}

TEST_CASE("the reader's projection is the projector's: wrong types, duplicate keys",
          "[projection]") {
  const auto base = simulatedLines(1500, 11);
  std::mt19937 rng(20261130);
  std::vector<std::string> lines;
  for (const std::string& line : base) {
    Json event = Json::parse(line);
    Json& object = event["object"];
    for (int m = 1 + static_cast<int>(rng() % 4); m > 0; --m) mutate(object, rng, 0);
    std::string text = event.dump();
    // Duplicate keys inside the object: an earlier copy loses, a later one wins.
    const auto spec = text.find(R"("spec":)");
    if (spec != std::string::npos && rng() % 2 == 0) {
      text.insert(spec, R"("spec":)" + oddValue(rng) + ",");
    }
    const auto status = text.find(R"("status":{)");
    if (status != std::string::npos && text[status + 10] != '}' && rng() % 2 == 0) {
      text.insert(status + 10, R"("phase":)" + oddValue(rng) + ",");
    }
    lines.push_back(text);
  }
  const ReaderCheck result = checkReader(lines);
  CHECK(result.projected + result.rejected == lines.size());
}

TEST_CASE("the reader leaves whole what it does not project", "[projection]") {
  const std::string pod =
      R"("apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","uid":"u",)"
      R"("managedFields":[{"manager":"m"}]},"spec":{"nodeName":"node-1"})";
  const std::vector<std::string> lines = {
      // Projected: events that record an object, and bare objects.
      R"({"type":"ADDED","object":{)" + pod + "}}",
      R"({"type":"DELETED","object":{)" + pod + R"(},"time":"2026-11-30T10:00:00Z"})",
      "{" + pod + "}",
      R"({"type":"ERROR","type":"MODIFIED","object":{)" + pod + "}}",
      // Left whole: bookmarks and errors (the Ingester reads their objects),
      // Lists (normalizeValue completes each item), a negative zero (the
      // fast path leaves it to nlohmann),
      // an event whose object is not an object, an unknown event type.
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}})",
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})",
      R"({"type":"MODIFIED","type":"ERROR","object":{"kind":"Status","code":410}})",
      R"({"apiVersion":"v1","kind":"PodList","items":[{)" + pod + "}]}",
      R"({"type":"ADDED","object":{)" + pod + R"(,"status":{"n":-0.0}}})",
      R"({"type":"ADDED","object":"text"})",
      R"({"type":"SOMETHING","object":{)" + pod + "}}",
  };
  const ReaderCheck result = checkReader(lines);
  CHECK(result.projected == 4);

  // What the Ingester reads of the values left whole is still there.
  std::istringstream in(lines[5] + "\n");
  ingest::ValueReader::Options options;
  options.projection = true;
  ingest::ValueReader reader(in, options);
  ingest::DecodedValue v;
  REQUIRE(reader.next(&v));
  CHECK(v.projection.empty());
  CHECK(v.value["object"]["reason"] == "Expired");
}

// The nlohmann projectors threw type_error for a string field holding
// another type where they read it with a default (a DRA source's "type", a
// device's "name" in a problem message), which stopped ingest; now the
// default is used.
TEST_CASE("projectors take a default for non-string fields they only name", "[projection]") {
  const Json config = Json::parse(R"({
    "apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration",
    "metadata": {"name": "c"},
    "resources": {"deviceClassMappings": [
      {"name": "m", "deviceClassNames": ["gpu"],
       "sources": [{"type": 5, "counter": {"name": "memory", "driver": "d"}}]}]}})");
  std::string bytes;
  REQUIRE_NOTHROW(bytes = ingest::projectObject(config));
  CHECK(problemsOf(bytes).empty());

  const Json slice = Json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "d", "devices": [{"name": 7, "attributes": {"a": {"float": 1}}}]}})");
  REQUIRE_NOTHROW(bytes = ingest::projectObject(slice));
  CHECK(problemsOf(bytes).find("device  attribute a has no bool") != std::string::npos);
}

// status.reclaimablePods, which the simulated cluster never writes: the
// reader's projection keeps it as the projector does, in its usual form and
// with entries of the wrong type, and the projection carries it.
TEST_CASE("the reader's projection is the projector's: a Workload's reclaimablePods",
          "[projection]") {
  const std::string head =
      R"({"type":"MODIFIED","object":{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",)"
      R"("metadata":{"name":"w","namespace":"n","uid":"u","resourceVersion":")";
  const std::string spec =
      R"("},"spec":{"queueName":"lq","podSets":[{"name":"main","count":4,"template":{"spec":)"
      R"({"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}}]},"status":{)"
      R"("admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main","count":4,)"
      R"("flavors":{"cpu":"default"},"resourceUsage":{"cpu":"4"}}]},"reclaimablePods":)";
  const std::vector<std::string> reclaimable = {
      R"([{"name":"main","count":2}])",
      R"([{"name":"main","count":2},{"name":"other","count":1}])",
      R"([])",
      R"([{"name":"main"}])",
      R"([{"name":7,"count":"2"},3,null])",
      R"({"name":"main","count":2})",
      R"(null)",
  };
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < reclaimable.size(); ++i) {
    lines.push_back(head + std::to_string(i + 1) + spec + reclaimable[i] + "}}}");
  }
  const ReaderCheck result = checkReader(lines);
  CHECK(result.projected == lines.size());

  const std::string bytes = ingest::projectObject(wholeObject(lines[1]));
  auto words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), words.size() * sizeof(capnp::word));
  capnp::FlatArrayMessageReader reader(words);
  auto pods = reader.getRoot<schema::Projection>().getBody().getWorkload().getReclaimablePods();
  REQUIRE(pods.size() == 2);
  CHECK(pods[0].getName() == "main");
  CHECK(pods[0].getCount() == 2);
  CHECK(pods[1].getName() == "other");
  CHECK(pods[1].getCount() == 1);
  CHECK(problemsOf(ingest::projectObject(wholeObject(lines[4])))
            .find("status.reclaimablePods.count is not an integer") != std::string::npos);
  CHECK(problemsOf(ingest::projectObject(wholeObject(lines[5])))
            .find("status.reclaimablePods is not a list") != std::string::npos);
}
