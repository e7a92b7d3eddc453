// The proof line of every answer (tools/render/proof_format.h): its members
// first in a JSON object, indented or compact as the answer is, and the one
// line tables print.
#include "tools/render/proof_format.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

namespace proof_stream_test {

// The answer written through ProofInserter in pieces of `piece` bytes.
std::string streamed(const std::string& answer, std::size_t piece,
                     const std::optional<Verification>& proof) {
  std::ostringstream out;
  render::ProofInserter inserter(out, proof);
  std::ostream stream(&inserter);
  for (std::size_t i = 0; i < answer.size(); i += piece) stream << answer.substr(i, piece);
  inserter.finish();
  return out.str();
}

}  // namespace proof_stream_test

TEST_CASE("an answer streamed through the proof inserter equals it whole", "[proof]") {
  const std::string never = R"("verifiedAt":null,"verifiedUpTo":null,"verifyOk":null,)"
                            R"("verifiedBy":null)";
  // The forms withProof gives, spelled out: members after the brace, a
  // comma before the answer's own first member, none in an empty object.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"a\":1}", "{" + never + ",\"a\":1}"},
      {"{}", "{" + never + "}"},
      {"  {  }\n", "  {" + never + "  }\n"},
      {"{", "{" + never + ","},
      {"[1]\n", "[1]\n"},
      {"", ""},
      {"{\n}\n",
       "{\n  \"verifiedAt\": null,\n  \"verifiedUpTo\": null,\n  \"verifyOk\": null,\n"
       "  \"verifiedBy\": null\n\n}\n"},
  };
  for (const auto& [answer, expected] : cases) {
    INFO(answer);
    CHECK(render::withProof(answer, std::nullopt) == expected);
    for (std::size_t piece : {1, 2, 3, 7, 1000}) {
      CHECK(proof_stream_test::streamed(answer, piece, std::nullopt) == expected);
    }
  }
  const std::string indented = "{\n  \"at\": 1,\n  \"rows\": [\n    {}\n  ]\n}\n";
  for (std::size_t piece : {1, 2, 5, 64}) {
    CHECK(proof_stream_test::streamed(indented, piece, failed()) ==
          render::withProof(indented, failed()));
  }
}
