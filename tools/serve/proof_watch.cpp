#include "tools/serve/proof_watch.h"

#include <sys/stat.h>

#include <filesystem>

#include "ledger/format.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::serve {

namespace {

const char* verifierName(VerificationScope scope) {
  return scope == VerificationScope::kFull ? "ledger-replay verify" : "background chain check";
}

// A header's value holds printable ASCII only; the problem quotes the
// ledger's keys, which may hold any bytes, and a Warning's text is quoted.
std::string headerText(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u > 0x7E || c == '"' || c == '\\' ? '?' : c);
  }
  return out;
}

}  // namespace

std::string ProofState::line() const {
  if (!error.empty()) return headerText("unknown: " + error);
  if (!proof) return "never verified";
  std::string out = std::string(proof->ok ? "verified" : "checked") + " up to seq " +
                    std::to_string(proof->upToSeq) + " at " + formatRfc3339(proof->timeNs) +
                    " by " + verifierName(proof->scope) + ": ";
  if (proof->ok) return out + "ok";
  out += "FAILED";
  if (proof->failedSeq != 0) out += " at seq " + std::to_string(proof->failedSeq);
  return headerText(out + ": " + proof->problem);
}

std::string ProofState::warning() const {
  if (error.empty() && (!proof || proof->ok)) return {};
  const std::string what = error.empty()
                               ? "answers may rest on edited data: " + line()
                               : "what was last proven of this ledger is unknown: " + error;
  return "299 - \"" + headerText(what) + "\"";
}

void ProofState::addTo(nlohmann::json& object) const {
  object["verifiedAt"] = proof ? nlohmann::json(formatRfc3339(proof->timeNs)) : nullptr;
  object["verifiedUpTo"] = proof ? nlohmann::json(proof->upToSeq) : nullptr;
  object["verifyOk"] = proof ? nlohmann::json(proof->ok) : nullptr;
  object["verifiedBy"] = proof ? nlohmann::json(verifierName(proof->scope)) : nullptr;
  if (proof && !proof->ok) {
    object["verifyFailedSeq"] = proof->failedSeq != 0 ? nlohmann::json(proof->failedSeq) : nullptr;
    object["verifyProblem"] = proof->problem;
  }
}

ProofState ProofWatch::current() {
  const std::string path = (std::filesystem::path(dir_) / format::kVerificationFile).string();
  struct stat st {};
  std::string signature = "absent";
  if (::stat(path.c_str(), &st) == 0) {
    // A rename replaces the inode; a rewrite in place changes size or time.
    signature = std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
                std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }
  std::lock_guard lock(mu_);
  if (read_ && signature == signature_) return state_;
  ProofState fresh;
  if (Status s = readVerification(dir_, &fresh.proof); !s.isOk()) fresh.error = s.message();
  state_ = std::move(fresh);
  signature_ = std::move(signature);
  read_ = true;
  return state_;
}

}  // namespace ledger::serve
