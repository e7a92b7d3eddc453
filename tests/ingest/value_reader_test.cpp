// Every input form ledger-ingest accepts, and recovery from bad values.
#include "ingest/value_reader.h"
#include "ingest/watch_event.h"
#include "schema/k8s/rfc3339.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::ingest;

TEST_CASE("JSON lines: one value per line with positions", "[ingest]") {
  auto values = testing::readValues("{\"a\":1}\n{\"b\":2}\n\n{\"c\":3}\n");
  REQUIRE(values.size() == 3);
  CHECK(values[0].line == 1);
  CHECK(values[2].line == 4);
  CHECK(values[2].value["c"] == 3);
  CHECK(values[1].offset == 8);
}

TEST_CASE("pretty-printed concatenated JSON as kubectl get -w prints it", "[ingest]") {
  const std::string text =
      "{\n    \"type\": \"ADDED\",\n    \"object\": {\n        \"kind\": \"Namespace\"\n    }\n}\n"
      "{\n    \"type\": \"MODIFIED\",\n    \"object\": {\"s\": \"a } brace { in a string\"}\n}\n";
  auto values = testing::readValues(text);
  REQUIRE(values.size() == 2);
  CHECK(values[0].error.empty());
  CHECK(values[1].error.empty());
  CHECK(values[1].line == 7);
  CHECK(values[1].value["object"]["s"] == "a } brace { in a string");
}

TEST_CASE("a malformed value in the middle is reported with its line; the rest is read",
          "[ingest]") {
  auto values = testing::readValues(
      "{\"a\":1}\n{\"b\": tru}\n{\"type\":\"ADDED\",\"obj\n{\"c\":3}\nnot json\n{\"d\":4}\n");
  REQUIRE(values.size() == 6);
  CHECK(values[0].error.empty());
  CHECK_THAT(values[1].error, Catch::Contains("invalid JSON at line 2"));
  CHECK_THAT(values[2].error, Catch::Contains("cut short"));
  CHECK(values[2].line == 3);
  CHECK(values[3].error.empty());
  CHECK(values[3].value["c"] == 3);
  CHECK_THAT(values[4].error, Catch::Contains("unexpected text"));
  CHECK(values[4].line == 5);
  CHECK(values[5].value["d"] == 4);
}

TEST_CASE("a value cut short by a new value at column 0 does not swallow it", "[ingest]") {
  auto values = testing::readValues("{\"a\": {\"b\": 1,\n{\"c\": 2}\n");
  REQUIRE(values.size() == 2);
  CHECK_FALSE(values[0].error.empty());
  CHECK(values[1].value["c"] == 2);
}

TEST_CASE("input ending inside a value is an error, not a hang", "[ingest]") {
  auto values = testing::readValues("{\"a\": [1, 2");
  REQUIRE(values.size() == 1);
  CHECK_THAT(values[0].error, Catch::Contains("ends inside"));
}

TEST_CASE("YAML multi-document manifests, typed as Kubernetes types them", "[ingest]") {
  const std::string text =
      "# a comment\n"
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels: {x: \"1\"}\n"
      "---\n"
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: cq\n"
      "spec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
      "      resources:\n      - name: cpu\n        nominalQuota: 40\n      - name: memory\n"
      "        nominalQuota: 200Gi\n"
      "---\n"
      "---\n"
      "metadata: {name: [broken\n"
      "...\n"
      "kind: X\n";
  auto values = testing::readValues(text);
  REQUIRE(values.size() == 4);
  CHECK(values[0].line == 2);
  CHECK(values[0].value["metadata"]["labels"]["x"] == "1");
  auto& res = values[1].value["spec"]["resourceGroups"][0]["flavors"][0]["resources"];
  CHECK(res[0]["nominalQuota"] == 40);
  CHECK(res[1]["nominalQuota"] == "200Gi");
  CHECK_THAT(values[2].error, Catch::Contains("invalid YAML"));
  CHECK(values[2].line == 24);
  CHECK(values[3].value["kind"] == "X");
}

TEST_CASE("a YAML document that is not UTF-8 is rejected at its line; the next is read",
          "[ingest]") {
  auto values =
      testing::readValues("kind: A\n---\nkind: B\nmetadata:\n  name: \"x\xA7y\"\n---\nkind: C\n");
  REQUIRE(values.size() == 3);
  CHECK(values[0].value["kind"] == "A");
  CHECK(values[1].error == "invalid YAML at line 5: not valid UTF-8");
  CHECK(values[2].value["kind"] == "C");
}

TEST_CASE("normalize: watch events, bare objects, Lists", "[ingest]") {
  auto ev = normalizeValue(nlohmann::json::parse(
      R"({"type":"MODIFIED","time":"2026-11-02T09:10:10.3Z","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}})"));
  REQUIRE(ev.events.size() == 1);
  CHECK(ev.events[0].type == WatchEventType::kModified);
  CHECK(*ev.events[0].timeNs % 1000000000 == 300000000);

  auto bare = normalizeValue(
      nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}})"));
  REQUIRE(bare.events.size() == 1);
  CHECK(bare.events[0].type == WatchEventType::kUpsert);

  auto list = normalizeValue(nlohmann::json::parse(
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"WorkloadList","items":[{"metadata":{"name":"a"}},{"metadata":{}}]})"));
  REQUIRE(list.events.size() == 1);
  CHECK(list.events[0].object["kind"] == "Workload");
  CHECK(list.events[0].object["apiVersion"] == "kueue.x-k8s.io/v1beta2");
  REQUIRE(list.errors.size() == 1);
  CHECK_THAT(list.errors[0], Catch::Contains("items[1]") && Catch::Contains("metadata.name"));

  CHECK_FALSE(normalizeValue(nlohmann::json::parse(R"({"type":"ADDED","object":{"kind":"Pod"}})"))
                  .errors.empty());
  CHECK_FALSE(
      normalizeValue(nlohmann::json::parse(R"({"type":"ADDED","time":"yesterday","object":{}})"))
          .errors.empty());
  CHECK_FALSE(
      normalizeValue(nlohmann::json::parse(R"({"type":"WHAT","object":{}})")).errors.empty());
  CHECK_FALSE(normalizeValue(nlohmann::json::parse(R"([1,2])")).errors.empty());
  auto bookmark = normalizeValue(nlohmann::json::parse(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"99"}}})"));
  REQUIRE(bookmark.events.size() == 1);
  CHECK(bookmark.events[0].type == WatchEventType::kBookmark);
}

TEST_CASE("RFC 3339 round trip", "[ingest]") {
  auto t = tryParseRfc3339("2026-11-02T09:10:10.3Z");
  REQUIRE(t);
  CHECK(formatRfc3339(*t) == "2026-11-02T09:10:10.3Z");
  CHECK(*tryParseRfc3339("2026-11-02T11:10:10+02:00") == *tryParseRfc3339("2026-11-02T09:10:10Z"));
  CHECK_FALSE(tryParseRfc3339("2026-02-30T00:00:00Z"));
  CHECK_FALSE(tryParseRfc3339("2026-11-02 09:10"));
  CHECK(formatRfc3339(0) == "1970-01-01T00:00:00Z");
}

TEST_CASE("formatRfc3339Fixed prints exactly the digits asked for, truncated", "[rfc3339]") {
  const std::int64_t t = *tryParseRfc3339("2026-11-29T10:00:05.123456789Z");
  CHECK(formatRfc3339Fixed(t, 0) == "2026-11-29T10:00:05Z");
  CHECK(formatRfc3339Fixed(t, 3) == "2026-11-29T10:00:05.123Z");
  CHECK(formatRfc3339Fixed(t, 6) == "2026-11-29T10:00:05.123456Z");
  CHECK(formatRfc3339Fixed(*tryParseRfc3339("2026-11-29T10:00:05Z"), 3) ==
        "2026-11-29T10:00:05.000Z");
  // Before the epoch the second still rounds down, as formatRfc3339 does.
  CHECK(formatRfc3339Fixed(-1, 3) == "1969-12-31T23:59:59.999Z");
  CHECK(formatRfc3339(-1) == "1969-12-31T23:59:59.999999999Z");
}

namespace {

std::vector<DecodedValue> readAllWith(const std::string& text, const ValueReader::Options& o) {
  std::istringstream in(text);
  ValueReader reader(in, o);
  std::vector<DecodedValue> out;
  DecodedValue v;
  while (reader.next(&v)) out.push_back(v);
  return out;
}

// `depth` arrays nested in one another, with a value at the bottom.
std::string nestedArrays(std::size_t depth) {
  return std::string(depth, '[') + "1" + std::string(depth, ']');
}

}  // namespace

TEST_CASE("JSON nested past the depth limit is rejected with its line; its neighbours are read",
          "[ingest][limits]") {
  // 100k levels: every recursive step after parsing (conversion, dump,
  // projection) would overflow the stack (input_limits.h).
  for (const bool wholeLines : {true, false}) {
    ValueReader::Options o;
    o.wholeLines = wholeLines;
    const std::string deep = "{\"type\":\"ADDED\",\"object\":{\"a\":" + nestedArrays(100000) + "}}";
    const auto values = readAllWith("{\"a\":1}\n\n" + deep + "\n{\"b\":2}\n" + nestedArrays(1001) +
                                        "\n" + nestedArrays(1000) + "\n",
                                    o);
    REQUIRE(values.size() == 5);
    CHECK(values[0].error.empty());
    CHECK(values[1].line == 3);
    CHECK(values[1].error == "JSON nested deeper than 1000 levels at line 3");
    CHECK(values[2].error.empty());
    CHECK(values[2].value["b"] == 2);
    CHECK(values[3].error == "JSON nested deeper than 1000 levels at line 5");
    CHECK(values[4].error.empty());  // the limit itself is accepted
  }
}

TEST_CASE("a YAML document over maxValueBytes is skipped whole, however long its lines",
          "[ingest][limits]") {
  ValueReader::Options o;
  o.maxValueBytes = 1000;
  // A line far longer than the limit, and more lines of the same document
  // after it that would parse as a document of their own.
  const std::string text = "kind: A\n---\nkind: B\ndata: " + std::string(200000, 'x') +
                           "\nmetadata:\n  name: tail\n---\nkind: C\n";
  const auto values = readAllWith(text, o);
  REQUIRE(values.size() == 3);
  CHECK(values[0].value["kind"] == "A");
  CHECK(values[1].error == "document larger than 1000 bytes");
  CHECK(values[1].line == 3);
  CHECK(values[2].error.empty());
  CHECK(values[2].value["kind"] == "C");
  CHECK(values[2].line == 8);
}

TEST_CASE("YAML aliases may not expand a document past maxValueBytes", "[ingest][limits]") {
  ValueReader::Options o;
  o.maxValueBytes = 1000;
  // 320 bytes of text that expand to more than 1200.
  const std::string text = "a: &x " + std::string(300, 'y') + "\nb: *x\nc: *x\nd: *x\n---\ne: *x\n";
  const auto values = readAllWith("kind: A\n---\n" + text, o);
  REQUIRE(values.size() == 3);
  CHECK(values[0].error.empty());
  CHECK(values[1].error.find("invalid YAML at line 6, column 4: aliases expand the document "
                             "past 1000 bytes") == 0);
  CHECK(!values[2].error.empty());  // `*x` is unknown in a document of its own
}
