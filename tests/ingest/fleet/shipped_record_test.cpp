// The fleet's wire format (ingest/fleet/shipped_record.h): what the
// consumer accepts from the network before it trusts a field.
#include "ingest/fleet/shipped_record.h"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <vector>

#include "ingest/fleet/fleet_error.h"

using namespace ledger;
using namespace ledger::fleet;

namespace {

struct Message {
  std::string subject;
  std::map<std::string, std::string> headers;
  std::string payload;
};

// A message as the publisher forms it for `record` with chain hash `hash`.
Message shippedMessage(const std::string& cluster, const Record& record, const Digest& hash) {
  Message m;
  m.subject = recordSubject(cluster);
  m.payload = encodeRecord(record);
  m.headers[kHeaderMsgId] = messageId(cluster, record.seq);
  m.headers[kHeaderCluster] = cluster;
  m.headers[kHeaderSeq] = std::to_string(record.seq);
  m.headers[kHeaderTime] = std::to_string(record.timeNs);
  m.headers[kHeaderChainHash] = toHex(hash);
  return m;
}

bool decode(const Message& m, ShippedRecord* out, std::string* error) {
  return decodeShippedRecord(
      m.subject,
      [&](const char* name) -> std::optional<std::string_view> {
        auto it = m.headers.find(name);
        if (it == m.headers.end()) return std::nullopt;
        return std::string_view(it->second);
      },
      m.payload, out, error);
}

Record sampleRecord() {
  Record r;
  r.seq = 7;
  r.type = EventType::kModified;
  r.timeNs = 1700000000123456789LL;
  r.identity = {"kueue.x-k8s.io", "v1beta2", "Workload", "team-a", "job-1", "uid-1", "42"};
  r.objectJson = R"({"kind":"Workload","metadata":{"name":"job-1"}})";
  return r;
}

}  // namespace

TEST_CASE("a cluster name is a DNS label: one subject token, one directory", "[fleet]") {
  CHECK(isClusterName("eu-west-1"));
  CHECK(isClusterName("a"));
  CHECK(isClusterName(std::string(63, 'x')));
  CHECK_FALSE(isClusterName(""));
  CHECK_FALSE(isClusterName(std::string(64, 'x')));
  CHECK_FALSE(isClusterName("EU"));
  CHECK_FALSE(isClusterName("a.b"));
  CHECK_FALSE(isClusterName("a*"));
  CHECK_FALSE(isClusterName(">"));
  CHECK_FALSE(isClusterName(".."));
  CHECK_FALSE(isClusterName("-a"));
  CHECK_FALSE(isClusterName("a-"));
  CHECK_FALSE(isClusterName("a/b"));
  CHECK_THROWS_AS(checkClusterName("A", "--cluster-name"), FleetError);
  CHECK(recordSubject("c1") == "ledger.c1.records");
  CHECK(messageId("c1", 12) == "c1:12");
}

TEST_CASE("a shipped record decodes when subject, headers and payload agree", "[fleet]") {
  const Record r = sampleRecord();
  const Digest hash = Sha256::of("some chain hash");
  const Message m = shippedMessage("c1", r, hash);
  ShippedRecord out;
  std::string error;
  REQUIRE(decode(m, &out, &error));
  CHECK(error.empty());
  CHECK(out.cluster == "c1");
  CHECK(out.seq == 7);
  CHECK(out.timeNs == r.timeNs);
  CHECK(out.chainHash == hash);
  CHECK(out.record == r);
  CHECK(out.bytes == m.payload);
}

TEST_CASE("every disagreement in a shipped record is refused, naming what is wrong", "[fleet]") {
  const Record r = sampleRecord();
  const Message good = shippedMessage("c1", r, Sha256::of("h"));
  struct Case {
    const char* what;
    std::function<void(Message&)> spoil;
    const char* named;
  };
  const std::vector<Case> cases = {
      {"subject of another form", [](Message& m) { m.subject = "ledger.c1"; }, "subject"},
      {"subject naming no cluster", [](Message& m) { m.subject = "ledger.C1.records"; }, "subject"},
      {"cluster header of another cluster", [](Message& m) { m.headers[kHeaderCluster] = "c2"; },
       kHeaderCluster},
      {"no seq", [](Message& m) { m.headers.erase(kHeaderSeq); }, kHeaderSeq},
      {"seq 0", [](Message& m) { m.headers[kHeaderSeq] = "0"; }, kHeaderSeq},
      {"seq with a sign", [](Message& m) { m.headers[kHeaderSeq] = "+7"; }, kHeaderSeq},
      {"message id of another seq", [](Message& m) { m.headers[kHeaderMsgId] = "c1:8"; },
       kHeaderMsgId},
      {"time not a number", [](Message& m) { m.headers[kHeaderTime] = "yesterday"; }, kHeaderTime},
      {"hash too short", [](Message& m) { m.headers[kHeaderChainHash] = "abcd"; },
       kHeaderChainHash},
      {"payload not a record", [](Message& m) { m.payload = "garbage"; }, "payload"},
      {"payload of another seq",
       [&](Message& m) {
         Record other = r;
         other.seq = 8;
         m.payload = encodeRecord(other);
       },
       "seq or time"},
      {"payload of another time",
       [&](Message& m) {
         Record other = r;
         other.timeNs += 1;
         m.payload = encodeRecord(other);
       },
       "seq or time"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Message m = good;
    c.spoil(m);
    ShippedRecord out;
    std::string error;
    CHECK_FALSE(decode(m, &out, &error));
    CHECK(error.find(c.named) != std::string::npos);
  }
}

TEST_CASE("a subject's cluster token is read whether or not it is a cluster name", "[fleet]") {
  CHECK(subjectClusterToken("ledger.a.records") == std::optional<std::string_view>("a"));
  CHECK(subjectClusterToken("ledger.a/b.records") == std::optional<std::string_view>("a/b"));
  CHECK_FALSE(isClusterName(*subjectClusterToken("ledger.a/b.records")));
  CHECK_FALSE(subjectClusterToken("ledger.records"));
  CHECK_FALSE(subjectClusterToken("other.a.records"));
}

TEST_CASE("a record's id may name its chain hash, and only its own", "[fleet]") {
  const Record r = sampleRecord();
  const Digest hash = Sha256::of("h");
  Message m = shippedMessage("eu-1", r, hash);
  ShippedRecord out;
  std::string error;
  m.headers[kHeaderMsgId] = hashedMessageId("eu-1", r.seq, hash);
  CHECK(decode(m, &out, &error));
  m.headers[kHeaderMsgId] = hashedMessageId("eu-1", r.seq, Sha256::of("another"));
  CHECK_FALSE(decode(m, &out, &error));
  CHECK(error.find(kHeaderMsgId) != std::string::npos);
  m.headers[kHeaderMsgId] = messageId("eu-1", r.seq) + ":junk";
  CHECK_FALSE(decode(m, &out, &error));
}
