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

// "verified up to seq N at T by ledger-replay verify: ok", "checked up to
// seq N at T by ...: FAILED at seq N: why", or "never verified (`ledger-replay verify` checks the
// whole ledger)"; no newline.
std::string proofLine(const std::optional<Verification>& proof);

}  // namespace ledger::render
