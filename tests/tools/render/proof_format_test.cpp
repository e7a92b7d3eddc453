// The proof line of every answer (tools/render/proof_format.h): its members
// first in a JSON object, indented or compact as the answer is, and the one
// line tables print.
#include "tools/render/proof_format.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace ledger;

namespace {

Verification failed() {
  Verification v;
  v.scope = VerificationScope::kFull;
  v.timeNs = 1'700'000'000'000'000'000;
  v.upToSeq = 9;
  v.ok = false;
  v.failedSeq = 4;
  v.problem = "the projection differs";
  return v;
}

}  // namespace

TEST_CASE("the proof's members come first in an answer, in its style", "[proof]") {
  Verification ok = failed();
  ok.ok = true;
  ok.failedSeq = 0;
  ok.problem.clear();
  const std::string indented = "{\n  \"at\": 1,\n  \"rows\": []\n}\n";
  const std::string out = render::withProof(indented, ok);
  INFO(out);
  const auto j = nlohmann::ordered_json::parse(out);
  CHECK(j.begin().key() == "verifiedAt");
  CHECK(j["verifiedAt"] == "2023-11-14T22:13:20Z");
  CHECK(j["verifiedUpTo"] == 9);
  CHECK(j["verifyOk"] == true);
  CHECK(j["verifiedBy"] == "ledger-replay verify");
  CHECK(j["at"] == 1);
  CHECK_FALSE(j.contains("verifyProblem"));
  // Indented as the rest: the answer's lines stay two spaces in.
  CHECK(out.starts_with("{\n  \"verifiedAt\": \"2023-11-14T22:13:20Z\",\n"));
  CHECK(out.ends_with("  \"rows\": []\n}\n"));

  const std::string compact = render::withProof(R"({"a":1})", failed());
  INFO(compact);
  const auto c = nlohmann::json::parse(compact);
  CHECK(c["verifyOk"] == false);
  CHECK(c["verifyFailedSeq"] == 4);
  CHECK(c["verifyProblem"] == "the projection differs");
  CHECK(c["a"] == 1);
  CHECK(compact.find('\n') == std::string::npos);

  const auto never = nlohmann::json::parse(render::withProof("{}", std::nullopt));
  CHECK(never["verifiedAt"].is_null());
  CHECK(never["verifiedUpTo"].is_null());
  CHECK(never["verifyOk"].is_null());
  CHECK(never.size() == 4);
  // Not an object: left as it is.
  CHECK(render::withProof("[1]\n", failed()) == "[1]\n");
}

TEST_CASE("the proof line says what was proven, or that nothing was", "[proof]") {
  CHECK(render::proofLine(std::nullopt).starts_with("never verified"));
  CHECK(render::proofLine(failed()) ==
        "checked up to seq 9 at 2023-11-14T22:13:20Z by ledger-replay verify: FAILED at seq 4: "
        "the projection differs");
  Verification chain = failed();
  chain.scope = VerificationScope::kChain;
  chain.ok = true;
  CHECK(render::proofLine(chain) ==
        "verified up to seq 9 at 2023-11-14T22:13:20Z by background chain check: ok");
}
