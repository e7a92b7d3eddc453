#include "verify.h"

#include "format.h"

namespace ledger {

Status verifyLog(const Ledger& ledger, VerifyReport* report) {
  *report = VerifyReport{};
  const std::uint64_t head = ledger.lastSeq();
  Digest previous{};
  std::uint64_t expected = 1;
  std::int64_t lastTime = INT64_MIN;
  auto fail = [&](std::uint64_t seq, std::string problem) {
    report->firstBadSeq = seq;
    report->problem = std::move(problem);
    return false;
  };
  Sha256 chain;
  Status st = ledger.scanRecords(1, head, [&](const Record& r, const Digest& stored) {
    if (r.seq != expected) {
      // The key skipped ahead (a gap) or the stored seq disagrees with its key.
      return fail(expected, r.seq > expected
                                ? "sequence gap: next record stored is seq " + std::to_string(r.seq)
                                : "record holds seq " + std::to_string(r.seq));
    }
    const Digest computed = chainHash(previous, encodeRecord(r), chain);
    if (computed != stored) return fail(r.seq, "hash chain broken: stored hash does not match");
    if (r.timeNs < lastTime) return fail(r.seq, "event time goes backwards");
    std::string projection;
    if (!ledger.getRaw(format::kProjectionFamily, format::seqKey(r.seq), &projection).isOk()) {
      return fail(r.seq, "projection missing");
    }
    std::string unused;
    if (!ledger.getRaw(format::kTimeIndexFamily, format::timeKey(r.timeNs, r.seq), &unused)
             .isOk()) {
      return fail(r.seq, "time index entry missing");
    }
    previous = stored;
    lastTime = r.timeNs;
    report->recordsChecked++;
    report->lastSeq = r.seq;
    ++expected;
    return true;
  });
  if (!st.isOk()) {
    if (st.isCorruption() && report->firstBadSeq == 0) {
      // Storage-level corruption (a bad block): the first seq not yet verified.
      report->firstBadSeq = expected;
      report->problem = st.message();
      return Status::ok();
    }
    return st;
  }
  if (report->firstBadSeq != 0) return Status::ok();
  if (report->lastSeq != head) {
    report->firstBadSeq = report->lastSeq + 1;
    report->problem = "records end at seq " + std::to_string(report->lastSeq) +
                      " but the head says " + std::to_string(head);
  } else if (head != 0 && previous != ledger.lastHash()) {
    report->firstBadSeq = head;
    report->problem = "head hash does not match the last record";
  }
  report->lastHashHex = toHex(previous);
  return Status::ok();
}

}  // namespace ledger
