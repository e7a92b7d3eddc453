// The proof line every answer carries (docs/reference.md, "The proof
// line"): the ledger's newest verification (ledger/verification_record.h),
// as JSON members and as one line of text.
//
// JSON: "verifiedAt" (RFC 3339), "verifiedUpTo" (seq), "verifyOk" and
// "verifiedBy" ("ledger-replay verify" or "background chain check"), all
// null when the ledger was never verified; while the newest verification
// failed, also "verifyFailedSeq" and "verifyProblem".
//
// Pure functions; thread-safe; never throw but std::bad_alloc.
#pragma once

#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

#include "ledger/verification_record.h"

namespace ledger::render {

// Who made a verification of this scope, as answers name it.
const char* verifierName(VerificationScope scope);

// `answer` with the proof's members first when it is one JSON object (as
// every ledger-query answer is), written in its style (indented by two, or
// compact); any other text unchanged.
std::string withProof(std::string_view answer, const std::optional<Verification>& proof);

// withProof as the answer is written: a stream buffer that passes what it
// is given on to `target`'s buffer, the proof's members inserted after the
// first brace, so that a large answer is not held and copied first. Call
// finish() after the answer's last byte. Borrows `target` and `proof`,
// which must outlive it; one thread.
class ProofInserter final : public std::streambuf {
 public:
  ProofInserter(std::ostream& target, const std::optional<Verification>& proof);
  void finish();

 protected:
  int overflow(int c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  enum class State { kBeforeOpen, kAfterOpen, kPassThrough };
  void feed(char c);
  void insert(bool emptyObject);

  std::streambuf& target_;
  const std::optional<Verification>& proof_;
  State state_ = State::kBeforeOpen;
  std::string pending_;  // blanks after the brace, not yet written
};

// "verified up to seq N at T by ledger-replay verify: ok", "checked up to
// seq N at T by ...: FAILED at seq N: why", or "never verified (`ledger-replay verify` checks the
// whole ledger)"; no newline.
std::string proofLine(const std::optional<Verification>& proof);

}  // namespace ledger::render
