#include <string>

#include "ledger/record.h"
#include "ledger/sha256.h"
#include "ledger/verify.h"

namespace ledger {

Status verifyChain(const Ledger& ledger, const ChainPoint& from, std::uint64_t to,
                   VerifyReport* report, ChainPoint* next) {
  *report = VerifyReport{};
  const std::uint64_t head = ledger.lastSeq();
  if (to == 0 || to > head) to = head;
  ChainPoint at = from;
  // A cut ledger's chain goes on from the link to its archive (ledger.h,
  // ArchiveCut): a check from before it starts there.
  if (const auto& cut = ledger.archiveCut(); cut && at.seq < cut->seq)
    at = ChainPoint{cut->seq, cut->hash, cut->timeNs};
  report->lastSeq = at.seq;
  report->lastHashHex = toHex(at.hash);
  if (to <= at.seq) {
    if (next != nullptr) *next = at;
    return Status::ok();
  }
  Sha256 hasher;
  auto fail = [&](std::uint64_t seq, std::string problem) {
    report->firstBadSeq = seq;
    report->problem = std::move(problem);
    return false;
  };
  Status st = ledger.scanRecords(at.seq + 1, to, [&](const Record& r, const Digest& stored) {
    const std::uint64_t expected = at.seq + 1;
    if (r.seq != expected) {
      return fail(expected, r.seq > expected
                                ? "sequence gap: next record stored is seq " + std::to_string(r.seq)
                                : "record holds seq " + std::to_string(r.seq));
    }
    if (chainHash(at.hash, encodeRecord(r), hasher) != stored) {
      return fail(r.seq, "hash chain broken: stored hash does not match");
    }
    if (r.timeNs < at.timeNs) return fail(r.seq, "event time goes backwards");
    at = ChainPoint{r.seq, stored, r.timeNs};
    report->recordsChecked++;
    return true;
  });
  if (!st.isOk()) {
    if (!st.isCorruption()) return st;
    // Storage-level corruption (a bad block): the first seq not yet verified.
    if (report->firstBadSeq == 0) fail(at.seq + 1, st.message());
  }
  if (report->firstBadSeq == 0 && at.seq != to) {
    fail(at.seq + 1, "records end at seq " + std::to_string(at.seq) + " but the head says " +
                         std::to_string(to));
  }
  report->lastSeq = at.seq;
  report->lastHashHex = toHex(at.hash);
  if (next != nullptr) *next = at;
  return Status::ok();
}

}  // namespace ledger
