#include "verify.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include "format.h"
#include "ledger_internal.h"
#include "projection.capnp.h"
#include "record_capnp.h"

namespace ledger {

Status checkProjection(std::string_view bytes, const Record* record) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0) {
    return Status::corruption("projection is not a whole number of words");
  }
  thread_local AlignedBuffer buffer;
  const kj::ArrayPtr<const capnp::word> words = buffer.load(bytes);
  try {
    // A deep copy follows every pointer, bounds-checking each, and counts
    // what it reads against the traversal limit, set to the message's own
    // size: a builder writes each object once and points to it once, so a
    // message that reads as more than it holds (pointers sharing one list,
    // lists of zero-sized elements that claim any length) was not written
    // by the ledger, and reading it would take as long as it claims.
    capnp::ReaderOptions limits;
    limits.traversalLimitInWords = 2 * words.size() + 64;
    capnp::FlatArrayMessageReader reader(words, limits);
    const auto projected = reader.getRoot<schema::ProjectedRecord>();
    capnp::MallocMessageBuilder copy;
    copy.setRoot(projected);
    if (record != nullptr && (static_cast<std::uint16_t>(projected.getType()) !=
                                  static_cast<std::uint16_t>(record->type) ||
                              projected.getTimeNs() != record->timeNs ||
                              readIdentity(projected.getIdentity()) != record->identity)) {
      return Status::corruption("projection is not the record's (type, time or identity differ)");
    }
  } catch (const kj::Exception& e) {
    return Status::corruption(std::string("projection does not decode: ") +
                              e.getDescription().cStr());
  }
  return Status::ok();
}

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
    if (Status problem = checkProjection(projection, &r); !problem.isOk()) {
      return fail(r.seq,
                  problem.message() + " (`ledger-replay rebuild-projection` derives it again)");
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
