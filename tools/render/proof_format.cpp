#include "tools/render/proof_format.h"

#include <nlohmann/json.hpp>
#include <sstream>
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
  std::ostringstream out;
  {
    ProofInserter inserter(out, proof);
    inserter.sputn(answer.data(), static_cast<std::streamsize>(answer.size()));
    inserter.finish();
  }
  return std::move(out).str();
}

ProofInserter::ProofInserter(std::ostream& target, const std::optional<Verification>& proof)
    : target_(*target.rdbuf()), proof_(proof) {}

void ProofInserter::finish() {
  // An answer that ends right after its brace (or in blanks) is not an
  // empty object: the members still get their comma, as before.
  if (state_ == State::kAfterOpen) insert(false);
}

int ProofInserter::overflow(int c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

std::streamsize ProofInserter::xsputn(const char* s, std::streamsize n) {
  std::streamsize i = 0;
  for (; i < n && state_ != State::kPassThrough; ++i) feed(s[i]);
  if (i < n && target_.sputn(s + i, n - i) != n - i) return i;
  return n;
}

int ProofInserter::sync() { return target_.pubsync(); }

void ProofInserter::feed(char c) {
  const bool blank = c == ' ' || c == '\t' || c == '\r' || c == '\n';
  if (state_ == State::kBeforeOpen) {
    target_.sputc(c);
    if (c == '{') {
      state_ = State::kAfterOpen;
    } else if (!blank) {
      state_ = State::kPassThrough;  // not an object: the text as it is
    }
    return;
  }
  // After the brace: the blanks up to the first member (or the closing
  // brace) wait, since they decide the members' style and separator.
  if (blank) {
    pending_ += c;
    return;
  }
  insert(c == '}');
  target_.sputc(c);
}

void ProofInserter::insert(bool emptyObject) {
  // nlohmann's dump(2) and JsonText's indented form put a newline after the
  // brace; a compact answer does not.
  const bool indented = !pending_.empty() && pending_[0] == '\n';
  std::string members;
  for (const auto& [key, value] : proofMembers(proof_)) {
    if (!members.empty()) members += ",";
    members += indented ? "\n  " : "";
    members += dumped(key) + (indented ? ": " : ":") + dumped(value);
  }
  if (!emptyObject) {
    members += ",";
  } else if (indented) {
    members += "\n";
  }
  members += pending_;
  target_.sputn(members.data(), static_cast<std::streamsize>(members.size()));
  pending_.clear();
  state_ = State::kPassThrough;
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
