// How the fleet consumer places each message it takes (fleet_consumer.h):
// decoded and checked, then acknowledged as a repeat, applied to its
// cluster's copy, held ahead of a gap, or refused; and, for signed copies,
// which pending records a good signature vouches for.
#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include "ingest/fleet/fleet_consumer.h"
#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/shipped_record.h"

namespace ledger::fleet {

namespace {

std::optional<std::string_view> headerOf(natsMsg* msg, const char* name) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, name, &value) != NATS_OK || value == nullptr) return std::nullopt;
  return std::string_view(value);
}

std::uint64_t streamSeqOf(natsMsg* msg, std::uint64_t* pending) {
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg) != NATS_OK) return 0;
  const std::uint64_t seq = meta->Sequence.Stream;
  if (pending != nullptr) *pending = meta->NumPending;
  jsMsgMetaData_Destroy(meta);
  return seq;
}

// A message past the held bounds comes again after this long, by when the
// records before it may have come.
constexpr std::int64_t kHeldAgainDelayMs = 5000;

}  // namespace

void FleetConsumer::take(OwnedMsg msg, Batch& batch) {
  TakenRecord taken;
  taken.streamSeq = streamSeqOf(msg.get(), &batch.pendingAfter);
  const char* data = natsMsg_GetData(msg.get());
  const std::string_view payload(data != nullptr ? data : "",
                                 static_cast<std::size_t>(natsMsg_GetDataLength(msg.get())));
  const char* subjectText = natsMsg_GetSubject(msg.get());
  const std::string_view subject(subjectText != nullptr ? subjectText : "");
  std::string error;
  if (!decodeShippedRecord(
          subject, [&](const char* name) { return headerOf(msg.get(), name); }, payload,
          &taken.shipped, &error)) {
    const auto token = subjectClusterToken(subject);
    const RefusalReason reason = token && !isClusterName(*token) ? RefusalReason::kBadClusterName
                                                                 : RefusalReason::kUndecodable;
    refuse(msg.get(), taken.shipped.cluster, reason, taken.streamSeq,
           (taken.shipped.seq ? "seq " + std::to_string(taken.shipped.seq) + ": " : "") + error);
    return;
  }
  const std::string& cluster = taken.shipped.cluster;
  const std::string where = "cluster " + cluster + " seq " + std::to_string(taken.shipped.seq);
  if (options_.trustedKeys && !options_.trustedKeys->knows(cluster)) {
    refuse(msg.get(), cluster, RefusalReason::kUnknownCluster, taken.streamSeq,
           where + ": no trusted key names the cluster");
    return;
  }
  if (options_.trustedKeys && !taken.shipped.signature) {
    refuse(msg.get(), cluster, RefusalReason::kUnsigned, taken.streamSeq,
           where + ": the message carries no signature");
    return;
  }
  taken.msg = std::move(msg);
  ClusterCopy& copy = copyFor(cluster);
  place(copy, std::move(taken), batch);
  releaseHeld(copy, batch);
}

void FleetConsumer::place(ClusterCopy& copy, TakenRecord taken, Batch& batch) {
  const std::uint64_t seq = taken.shipped.seq;
  for (bool disputed = false;; disputed = true) {
    std::optional<Refusal> refusal;
    if (seq <= copy.appliedSeq) {
      refusal = copy.checkRepeat(taken.shipped);
      // A repeat of a pending record is vouched for by nothing yet: its own
      // signature decides, not its likeness to a record that may be forged.
      if (!refusal && options_.trustedKeys && !copy.pending.empty() && seq >= copy.pendingFirst &&
          !verified(copy, seq, taken.shipped.chainHash, taken.shipped.signature)) {
        refusal = Refusal{RefusalReason::kSignature, "cluster " + copy.name + " seq " +
                                                         std::to_string(seq) +
                                                         ": the signature is not the cluster's"};
      }
      if (!refusal) {
        batch.toAck.push_back(std::move(taken.msg));
        return;
      }
    } else if (seq - copy.appliedSeq > options_.seqWindow) {
      refusal = Refusal{RefusalReason::kBeyondWindow,
                        "cluster " + copy.name + " seq " + std::to_string(seq) + " is more than " +
                            std::to_string(options_.seqWindow) + " past the copy's head at seq " +
                            std::to_string(copy.appliedSeq)};
    } else if (seq > copy.appliedSeq + 1) {
      hold(copy, std::move(taken));
      return;
    } else {
      refusal = copy.checkNext(taken.shipped, encoder_, hasher_);
      if (!refusal) {
        copy.accept(std::move(taken), options_.projection);
        return;
      }
    }
    // A signed copy's pending records are not yet vouched for: one that
    // conflicts with them may be the cluster's own, and they a forgery.
    const bool contested =
        refusal->reason == RefusalReason::kDiffers || refusal->reason == RefusalReason::kChain;
    if (!disputed && contested && options_.trustedKeys && !copy.pending.empty() &&
        seq >= copy.pendingFirst && disputePending(copy)) {
      continue;
    }
    refuse(taken.msg.get(), copy.name, refusal->reason, taken.streamSeq, refusal->detail);
    return;
  }
}

void FleetConsumer::releaseHeld(ClusterCopy& copy, Batch& batch) {
  while (!copy.held.empty() && copy.held.begin()->first <= copy.appliedSeq + 1) {
    auto node = copy.held.extract(copy.held.begin());
    heldBytes_ -= node.mapped().size();
    --heldCount_;
    place(copy, std::move(node.mapped()), batch);
  }
}

void FleetConsumer::hold(ClusterCopy& copy, TakenRecord taken) {
  const std::uint64_t seq = taken.shipped.seq;
  if (copy.held.contains(seq) || heldCount_ >= options_.maxHeld ||
      heldBytes_ + taken.size() > options_.maxHeldBytes) {
    // Handed back, not refused: it may well be the cluster's own record,
    // due once the ones before it come.
    if (!copy.held.contains(seq) && !warnedHeldFull_) {
      spdlog::warn(
          "fleet: {} records ({} bytes) are held ahead of gaps, the most allowed; later ones come "
          "again in {} ms",
          heldCount_, heldBytes_, kHeldAgainDelayMs);
      warnedHeldFull_ = true;
    }
    natsMsg_NakWithDelay(taken.msg.get(), kHeldAgainDelayMs, nullptr);
    return;
  }
  // Checked on arrival: a forgery holds no memory while it waits.
  if (options_.trustedKeys) {
    if (!verified(copy, seq, taken.shipped.chainHash, taken.shipped.signature)) {
      refuse(taken.msg.get(), copy.name, RefusalReason::kSignature, taken.streamSeq,
             "cluster " + copy.name + " seq " + std::to_string(seq) +
                 ": the signature is not the cluster's");
      return;
    }
    taken.verified = true;
  }
  heldBytes_ += taken.size();
  ++heldCount_;
  copy.held.emplace(seq, std::move(taken));
}

bool FleetConsumer::verified(const ClusterCopy& copy, std::uint64_t seq, const Digest& hash,
                             const std::optional<Signature>& signature) const {
  return signature && options_.trustedKeys->verify(copy.name, seq, hash, *signature);
}

bool FleetConsumer::disputePending(ClusterCopy& copy) {
  // Every pending record carries a signature and chains onto the one before,
  // so the good signatures are a prefix: a record after a forged one chains
  // onto the forgery and is forged too. Searched by halves, a forgery costs a
  // few checks, not one per pending record.
  auto good = [&](std::size_t i) {
    PendingMessage& m = copy.pendingMsgs[i];
    if (!m.verified) {
      m.verified = verified(copy, copy.pendingFirst + i, copy.pendingHashes[i], m.signature);
    }
    return m.verified;
  };
  std::size_t lo = 0, hi = copy.pendingMsgs.size();  // the first bad one is in [lo, hi]
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (good(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == copy.pendingMsgs.size()) return false;
  refuseFrom(copy, lo);
  return true;
}

std::size_t FleetConsumer::vouchedPending(ClusterCopy& copy) {
  if (!options_.trustedKeys) return copy.pending.size();
  // The last record's signature vouches for every one before it.
  PendingMessage& last = copy.pendingMsgs.back();
  if (!last.verified) {
    last.verified = verified(copy, copy.appliedSeq, copy.appliedHash, last.signature);
  }
  if (!last.verified) disputePending(copy);
  return copy.pending.size();
}

void FleetConsumer::refuseFrom(ClusterCopy& copy, std::size_t first) {
  const std::uint64_t firstSeq = copy.pendingFirst + first;
  std::vector<PendingMessage> dropped = copy.dropPendingFrom(first);
  for (std::size_t i = 0; i < dropped.size(); ++i) {
    const std::string where = "cluster " + copy.name + " seq " + std::to_string(firstSeq + i);
    if (i == 0) {
      refuse(dropped[i].msg.get(), copy.name, RefusalReason::kSignature, dropped[i].streamSeq,
             where + ": the signature is not the cluster's");
    } else {
      refuse(dropped[i].msg.get(), copy.name, RefusalReason::kChain, dropped[i].streamSeq,
             where + ": it chains onto a refused record");
    }
  }
}

void FleetConsumer::refuse(natsMsg* msg, const std::string& cluster, RefusalReason reason,
                           std::uint64_t streamSeq, const std::string& detail) {
  // Terminated: JetStream never delivers it again, and it no longer holds
  // the acknowledgement floor back.
  natsMsg_Term(msg, nullptr);
  std::string label;
  {
    std::lock_guard lock(mu_);
    auto it = copies_.find(cluster);
    if (it != copies_.end() && it->second->open) label = cluster;
  }
  if (options_.trustedKeys && options_.trustedKeys->knows(cluster)) label = cluster;
  refused_.note(label, reason, streamSeq,
                label.empty() && !cluster.empty() && isClusterName(cluster)
                    ? "cluster " + cluster + " (no copy): " + detail
                    : detail);
}

}  // namespace ledger::fleet
