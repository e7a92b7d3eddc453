#include "ingest/fleet/cluster_copy.h"

#include "ingest/fleet/fleet_error.h"
#include "ingest/ingester.h"

namespace ledger::fleet {

void ClusterCopy::adopt(std::unique_ptr<Ledger> opened) {
  ledger = std::move(opened);
  appliedSeq = ledger->lastSeq();
  appliedHash = ledger->lastHash();
  appliedTimeNs = ledger->lastTimeNs();
  committedSeq = appliedSeq;
  open = true;
}

std::optional<Refusal> ClusterCopy::checkRepeat(const ShippedRecord& r) const {
  Digest stored{};
  bool found = false;
  if (pendingFirst != 0 && r.seq >= pendingFirst && r.seq - pendingFirst < pendingHashes.size()) {
    stored = pendingHashes[r.seq - pendingFirst];
    found = true;
  } else if (ledger) {
    Status st =
        ledger->scanLogBytes(r.seq, r.seq, [&](std::uint64_t, const Digest& h, std::string_view) {
          stored = h;
          found = true;
          return false;
        });
    if (!st.isOk()) throw FleetError("reading cluster " + name + "'s copy", st);
  }
  if (found && stored == r.chainHash) return std::nullopt;
  return Refusal{RefusalReason::kDiffers,
                 "cluster " + name + " seq " + std::to_string(r.seq) +
                     ": the record differs from the one the fleet's copy holds at that seq "
                     "(chain hash " +
                     toHex(r.chainHash) + ", held " + toHex(stored) +
                     "): two publishers with one cluster name, or an altered record"};
}

std::optional<Refusal> ClusterCopy::checkNext(const ShippedRecord& r, RecordEncoder& encoder,
                                              Sha256& hasher) const {
  const std::string where = "cluster " + name + " seq " + std::to_string(r.seq);
  const Digest expected = chainHash(appliedHash, r.bytes, hasher);
  if (expected != r.chainHash) {
    return Refusal{RefusalReason::kChain,
                   where + ": the chain hash shipped with the record (" + toHex(r.chainHash) +
                       ") is not the hash of the copy's previous record and this record (" +
                       toHex(expected) +
                       "): altered on the way or from another ledger; the copy "
                       "stays at seq " +
                       std::to_string(appliedSeq)};
  }
  // The ledger raises a time that goes backwards, and would store bytes
  // other than the source's under the source's hash.
  if (appliedSeq > 0 && r.record.timeNs < appliedTimeNs) {
    return Refusal{RefusalReason::kNotCanonical,
                   where + ": its time is before the previous record's, which no ledger writes"};
  }
  std::size_t at = 0;
  for (std::string_view part : encoder.encode(r.record, r.record.objectJson)) {
    if (r.bytes.substr(at, part.size()) != part) {
      at = std::string_view::npos;
      break;
    }
    at += part.size();
  }
  if (at != r.bytes.size()) {
    return Refusal{RefusalReason::kNotCanonical,
                   where +
                       ": the record's bytes are not the encoding this build writes, so the "
                       "copy's chain would differ from the source's"};
  }
  return std::nullopt;
}

void ClusterCopy::accept(TakenRecord&& taken, const ingest::ProjectionOptions& projection) {
  ShippedRecord& r = taken.shipped;
  if (pending.empty()) pendingFirst = r.seq;
  appliedSeq = r.seq;
  appliedHash = r.chainHash;
  appliedTimeNs = r.record.timeNs;
  lastStreamSeq = std::max(lastStreamSeq, taken.streamSeq);
  pendingHashes.push_back(r.chainHash);
  pending.push_back(ingest::pendingRecordOf(std::move(r.record), projection));
  pendingMsgs.push_back({std::move(taken.msg), taken.streamSeq, r.signature, taken.verified});
}

std::vector<PendingMessage> ClusterCopy::dropPendingFrom(std::size_t first) {
  std::vector<PendingMessage> dropped(std::make_move_iterator(pendingMsgs.begin() + first),
                                      std::make_move_iterator(pendingMsgs.end()));
  pending.resize(first);
  pendingHashes.resize(first);
  pendingMsgs.resize(first);
  if (first > 0) {
    appliedSeq = pendingFirst + first - 1;
    appliedHash = pendingHashes.back();
    appliedTimeNs = pending.back().timeNs;
  } else {
    appliedSeq = ledger ? ledger->lastSeq() : 0;
    appliedHash = ledger ? ledger->lastHash() : Digest{};
    appliedTimeNs = ledger ? ledger->lastTimeNs() : 0;
    pendingFirst = 0;
  }
  return dropped;
}

std::vector<PendingRecord> ClusterCopy::takePending(std::size_t count) {
  std::vector<PendingRecord> out;
  if (count == pending.size()) {
    out.swap(pending);
  } else {
    out.assign(std::make_move_iterator(pending.begin()),
               std::make_move_iterator(pending.begin() + count));
    pending.erase(pending.begin(), pending.begin() + count);
  }
  pendingHashes.erase(pendingHashes.begin(), pendingHashes.begin() + count);
  pendingFirst = pending.empty() ? 0 : pendingFirst + count;
  return out;
}

}  // namespace ledger::fleet
