// Identity fields (ingest/watch_event.h objectProblem): a control character
// or invalid UTF-8 in apiVersion, kind, name, namespace, uid or
// resourceVersion is rejected with the value's position, in JSON and YAML,
// and never reaches the ledger, whose verify it used to break for good.
#include "ingest/watch_event.h"

#include "ledger/verify.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::ingest;
using namespace ledger::testing;

namespace {

Json configMap(const std::string& name, const std::string& uid, const std::string& rv) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", meta("ns", name, uid, rv)}};
}

}  // namespace

TEST_CASE("control characters and invalid UTF-8 in identity fields are object problems",
          "[ingest][limits]") {
  CHECK(objectProblem(configMap("cm", "u1", "1")).empty());
  CHECK(objectProblem(configMap("caf\xC3\xA9", "u1", "1")).empty());  // UTF-8 is tolerated
  CHECK(objectProblem(configMap(std::string("a\0b", 3), "u1", "1")) ==
        "object's metadata.name holds the control character U+0000 at byte 1");
  CHECK(objectProblem(configMap("cm", "u\x01", "1")) ==
        "object's metadata.uid holds the control character U+0001 at byte 1");
  CHECK(objectProblem(configMap("cm", "u1", "1\x7F")) ==
        "object's metadata.resourceVersion holds the control character U+007F at byte 1");
  CHECK(objectProblem(configMap("cm", "u1", "1\n")) ==
        "object's metadata.resourceVersion holds the control character U+000A at byte 1");
  Json o = configMap("cm", "u1", "1");
  o["metadata"]["namespace"] = "n\ts";
  CHECK(objectProblem(o) ==
        "object's metadata.namespace holds the control character U+0009 at "
        "byte 1");
  o = configMap("cm", "u1", "1");
  o["kind"] = std::string("Config\0Map", 10);
  CHECK(objectProblem(o) == "object's kind holds the control character U+0000 at byte 6");
  o = configMap("cm", "u1", "1");
  o["apiVersion"] = "v\xFF";
  CHECK(objectProblem(o) == "object's apiVersion is not valid UTF-8");
}

TEST_CASE("a NUL in an identity is rejected at ingest; the ledger around it verifies",
          "[ingest][limits]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("ledger"));
  // As the API server or kubectl would print them: \u0000 escapes in JSON,
  // \0 in a YAML double-quoted scalar.
  const std::string text =
      event("ADDED", configMap("a", "u1", "1")) +
      "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
      "\"metadata\":{\"namespace\":\"ns\",\"name\":\"b\\u0000\",\"uid\":\"u2\","
      "\"resourceVersion\":\"2\"}}}\n" +
      "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Config\\u0000Map\","
      "\"metadata\":{\"namespace\":\"ns\",\"name\":\"c\",\"uid\":\"u3\","
      "\"resourceVersion\":\"3\"}}}\n" +
      "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
      "\"metadata\":{\"namespace\":\"ns\",\"name\":\"d\",\"uid\":\"u4\","
      "\"resourceVersion\":\"4\\u0000\"}}}\n" +
      event("ADDED", configMap("e", "u5", "5"));
  const IngestOutcome json = ingestText(*ledger, text);
  CHECK(json.rejected == 3);
  REQUIRE(json.errors.size() == 3);
  CHECK(json.errors[0] ==
        "line 2: object's metadata.name holds the control character U+0000 at byte 1");
  CHECK(json.errors[1] == "line 3: object's kind holds the control character U+0000 at byte 6");
  const IngestOutcome yaml = ingestText(
      *ledger, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"f\\0\", namespace: ns}\n");
  REQUIRE(yaml.errors.size() == 1);
  CHECK(yaml.errors[0] ==
        "line 1: object's metadata.name holds the control character U+0000 at byte 1");
  CHECK(ledger->lastSeq() == 2);
  VerifyReport v;
  REQUIRE(verifyLog(*ledger, &v).isOk());
  INFO(v.problem);
  CHECK(v.ok());
}
