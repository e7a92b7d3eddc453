#include "tools/render/proof_format.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "schema/k8s/rfc3339.h"

namespace ledger::render {

namespace {

using Member = std::pair<const char*, nlohmann::json>;

std::vector<Member> proofMembers(const std::optional<Verification>& proof) {
  if (!proof) {
    return {{"verifiedAt", nullptr},
            {"verifiedUpTo", nullptr},
            {"verifyOk", nullptr},
            {"verifiedBy", nullptr}};
  }
  std::vector<Member> out = {{"verifiedAt", formatRfc3339(proof->timeNs)},
                             {"verifiedUpTo", proof->upToSeq},
                             {"verifyOk", proof->ok},
                             {"verifiedBy", verifierName(proof->scope)}};
  if (!proof->ok) {
    out.emplace_back("verifyFailedSeq",
                     proof->failedSeq != 0 ? nlohmann::json(proof->failedSeq) : nullptr);
    out.emplace_back("verifyProblem", proof->problem);
  }
  return out;
}

std::string dumped(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

const char* verifierName(VerificationScope scope) {
  return scope == VerificationScope::kFull ? "ledger-replay verify" : "background chain check";
}

std::string withProof(std::string_view answer, const std::optional<Verification>& proof) {
  const auto open = answer.find_first_not_of(" \t\r\n");
  if (open == std::string_view::npos || answer[open] != '{') return std::string(answer);
  const auto next = answer.find_first_not_of(" \t\r\n", open + 1);
  const bool empty = next != std::string_view::npos && answer[next] == '}';
  // nlohmann's dump(2) and JsonText's indented form put a newline after the
  // brace; a compact answer does not.
  const bool indented = open + 1 < answer.size() && answer[open + 1] == '\n';
  std::string members;
  for (const auto& [key, value] : proofMembers(proof)) {
    if (!members.empty()) members += ",";
    members += indented ? "\n  " : "";
    members += dumped(key) + (indented ? ": " : ":") + dumped(value);
  }
  std::string out;
  out.reserve(answer.size() + members.size() + 2);
  out.append(answer.substr(0, open + 1));
  out += members;
  if (!empty) {
    out += ",";
  } else if (indented) {
    out += "\n";
  }
  out.append(answer.substr(open + 1));
  return out;
}

std::string proofLine(const std::optional<Verification>& proof) {
  if (!proof) return "never verified (`ledger-replay verify` checks the whole ledger)";
  // "verified" only of what passed.
  std::string line = std::string(proof->ok ? "verified" : "checked") + " up to seq " +
                     std::to_string(proof->upToSeq) + " at " + formatRfc3339(proof->timeNs) +
                     " by " + verifierName(proof->scope) + ": ";
  if (proof->ok) return line + "ok";
  line += "FAILED";
  if (proof->failedSeq != 0) line += " at seq " + std::to_string(proof->failedSeq);
  return line + ": " + proof->problem;
}

}  // namespace ledger::render
