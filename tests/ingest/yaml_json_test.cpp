// YAML -> JSON (ingest/yaml_json.h): a mapping with the same key twice is
// invalid YAML and is rejected with its position, in the converter and in
// the stream reader, so that objects printed without `---` between them are
// not merged into one.
#include <yaml-cpp/yaml.h>

#include "ingest/yaml_json.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::ingest;
using namespace ledger::testing;

namespace {

// Two ClusterQueues as `kubectl get ... -o yaml` prints objects one after the
// other when the separator is lost (e.g. joined with `cat` after a `sed`).
const char* kTwoObjectsNoSeparator =
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ClusterQueue\n"
    "metadata:\n"
    "  name: team-a\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\n"
    "kind: ClusterQueue\n"
    "metadata:\n"
    "  name: team-b\n";

}  // namespace

TEST_CASE("yaml: a mapping with a key twice is rejected at the second key", "[ingest][yaml]") {
  try {
    parseYamlDocument(kTwoObjectsNoSeparator);
    FAIL("a mapping with duplicate keys was accepted");
  } catch (const YAML::Exception& e) {
    CHECK_THAT(e.msg, Catch::Contains("duplicate mapping key \"apiVersion\""));
    CHECK(e.mark.line == 4);  // 0-based: the fifth line
    CHECK(e.mark.column == 0);
  }
  // Nested mappings and mappings inside sequences too.
  CHECK_THROWS_AS(parseYamlDocument("metadata:\n  name: a\n  name: b\n"), YAML::Exception);
  CHECK_THROWS_AS(parseYamlDocument("items:\n- {a: 1, a: 2}\n"), YAML::Exception);
  // A quoted key is the same key.
  CHECK_THROWS_AS(parseYamlDocument("kind: A\n\"kind\": B\n"), YAML::Exception);
  // The same key in different mappings is fine.
  const auto ok = parseYamlDocument("a: {name: x}\nb: {name: y}\nc: [{name: 1}, {name: 2}]\n");
  CHECK(ok["a"]["name"] == "x");
  CHECK(ok["c"][1]["name"] == 2);
}

TEST_CASE("yaml: checkUniqueKeys checks parsed nodes the same way", "[ingest][yaml]") {
  CHECK_NOTHROW(checkUniqueKeys(YAML::Load("a: [{x: 1}, {x: 2}]\nb: {x: 1}\n")));
  try {
    checkUniqueKeys(YAML::Load("users:\n- name: u\n  user: {token: a, token: b}\n"));
    FAIL("duplicate keys in a sequence item's mapping were accepted");
  } catch (const YAML::Exception& e) {
    CHECK_THAT(e.msg, Catch::Contains("\"token\""));
    CHECK(e.mark.line == 2);
    CHECK(e.mark.column == 19);
  }
}

TEST_CASE("yaml: the stream reader rejects the document with line and column; the next is read",
          "[ingest][yaml]") {
  const std::string text =
      std::string("kind: A\n---\n") + kTwoObjectsNoSeparator + "---\nkind: C\n";
  const auto values = readValues(text);
  REQUIRE(values.size() == 3);
  CHECK(values[0].value["kind"] == "A");
  CHECK(values[1].line == 3);
  CHECK_THAT(values[1].error, Catch::StartsWith("invalid YAML at line 7, column 1: duplicate "
                                                "mapping key \"apiVersion\""));
  CHECK(values[2].value["kind"] == "C");
}

TEST_CASE("yaml: ingesting objects printed without separators records none of them",
          "[ingest][yaml]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  const std::string good = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n";
  const auto out = ingestText(*ledger, good + "---\n" + kTwoObjectsNoSeparator);
  CHECK(out.rejected == 1);
  REQUIRE(out.errors.size() == 1);
  CHECK_THAT(out.errors[0],
             Catch::Contains("line 10, column 1") && Catch::Contains("duplicate mapping key"));
  CHECK(out.stats.recorded == 1);
  CHECK(out.stats.recordedByKind.count("ClusterQueue") == 0);
}

namespace {

// "Billion laughs": nine levels of ten aliases each, 10^9 nodes once
// expanded; `levels` of them here.
std::string aliasBomb(int levels) {
  std::string text = "a0: &a0 [lol]\n";
  for (int i = 1; i <= levels; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += (j ? ", " : "") + prev;
    text += "]\n";
  }
  return text;
}

}  // namespace

TEST_CASE("excessive aliasing is refused where go-yaml refuses it, at the alias",
          "[ingest][yaml][limits]") {
  // Five levels (10^5 nodes) pass go-yaml's ratio already; the nine of the
  // real bomb (10^9) are run by the crash suite, under a memory limit.
  try {
    parseYamlDocument(aliasBomb(5));
    FAIL("the alias bomb was accepted");
  } catch (const YAML::Exception& e) {
    CHECK(e.msg.find("document contains excessive aliasing") == 0);
    CHECK(e.mark.line == 4);  // 0-based: the first level past go-yaml's ratio
  }
  // Aliases as manifests use them are fine.
  const auto ok = parseYamlDocument("base: &b {cpu: 1, memory: 1Gi}\nx: *b\ny: *b\nz: [*b, *b]\n" +
                                    aliasBomb(2));
  CHECK(ok["z"][1]["memory"] == "1Gi");
  CHECK(ok["a2"][9].size() == 10);
}

TEST_CASE("an alias inside the node it names is refused, not converted forever",
          "[ingest][yaml][limits]") {
  CHECK_THROWS_WITH(parseYamlDocument("a: &x [1, *x]\n"),
                    Catch::Contains("alias refers to a node that contains it"));
  CHECK_THROWS_WITH(parseYamlDocument("a: &x {b: *x}\n"),
                    Catch::Contains("alias refers to a node that contains it"));
}

TEST_CASE("a YAML scalar that yaml-cpp decodes to bytes that are not UTF-8 is rejected",
          "[ingest][yaml]") {
  // Found by tests/fuzz/yaml_reader_fuzz: NUL bytes in the stream make
  // yaml-cpp guess UTF-16 or UTF-32 and decode bytes that are not UTF-8,
  // which nlohmann's dump() throws on when the object is recorded.
  CHECK_THROWS_WITH(parseYamlDocument(std::string("k\0\0\0\0\0ind: A\n", 14)),
                    Catch::Contains("not valid UTF-8"));
}

// An explicit !!str makes a string of what would read as a number, a bool
// or null, as in go-yaml; it used to be stored as the number 1.
TEST_CASE("yaml: a scalar tagged !!str is a string", "[ingest][yaml]") {
  const auto j = parseYamlDocument("a: !!str 1\nb: !!str true\nc: !!str null\nd: 1\ne: '1'\n");
  CHECK(j["a"] == "1");
  CHECK(j["b"] == "true");
  CHECK(j["c"] == "null");
  CHECK(j["d"] == 1);
  CHECK(j["e"] == "1");
}
