// One cluster's copy as the fleet consumer keeps it (fleet_consumer.h):
// the committed ledger, the records checked and waiting for their commit,
// and the records held ahead of a gap with the messages that brought them.
//
// Check before commit: a record joins the copy's pending list only once
// checkNext() found that the ledger will store exactly its bytes at exactly
// its seq with exactly its chain hash (it chains, its time does not go
// backwards, its encoding is the one this build writes). The commit then
// cannot produce a copy that differs from the source.
//
// No directory before a record passed: `ledger` stays null until the first
// commit opens (creates) it.
//
// Ownership: owns its ledger and its held messages. Thread safety: the
// consumer's thread only, except `committedSeq` and `open`, read from any.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingest/fleet/refused_messages.h"
#include "ingest/fleet/shipped_record.h"
#include "ingest/projector.h"
#include "ledger/ledger.h"
#include "ledger/record.h"

namespace ledger::fleet {

struct MsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
using OwnedMsg = std::unique_ptr<natsMsg, MsgDeleter>;

// A message the consumer took, decoded, with where it lies in the stream.
struct TakenRecord {
  OwnedMsg msg;
  ShippedRecord shipped;
  std::uint64_t streamSeq = 0;
  bool verified = false;  // its signature was checked and is good
  std::size_t size() const { return shipped.bytes.size(); }
};

// A message whose record is pending: acknowledged once the record is
// committed, terminated if it is refused before.
struct PendingMessage {
  OwnedMsg msg;
  std::uint64_t streamSeq = 0;
  std::optional<Signature> signature;
  bool verified = false;  // its signature was checked and is good
};

// Why a record is refused, for the log and the metric.
struct Refusal {
  RefusalReason reason;
  std::string detail;
};

struct ClusterCopy {
  std::string name;
  std::unique_ptr<Ledger> ledger;
  std::atomic<bool> open{false};  // ledger is set
  // Applied: committed, or checked and pending (whose hashes follow).
  std::uint64_t appliedSeq = 0;
  Digest appliedHash{};
  std::int64_t appliedTimeNs = 0;
  std::vector<PendingRecord> pending;
  std::vector<Digest> pendingHashes;  // the shipped hash of each pending record
  std::vector<PendingMessage> pendingMsgs;
  std::uint64_t pendingFirst = 0;
  std::uint64_t lastStreamSeq = 0;
  // Records ahead of appliedSeq + 1, by seq.
  std::map<std::uint64_t, TakenRecord> held;
  std::uint64_t recordsApplied = 0;
  std::atomic<std::uint64_t> committedSeq{0};

  // Takes the head of a ledger opened on a directory that was there.
  void adopt(std::unique_ptr<Ledger> opened);
  // A record at a seq already applied: nullopt when it is the very record
  // applied there (a repeat to acknowledge), else why it is refused.
  // Throws FleetError(kLedger) when the copy cannot be read.
  std::optional<Refusal> checkRepeat(const ShippedRecord& r) const;
  // The record at appliedSeq + 1: nullopt when the ledger will store it as
  // shipped. `encoder` and `hasher` are the caller's, reused.
  std::optional<Refusal> checkNext(const ShippedRecord& r, RecordEncoder& encoder,
                                   Sha256& hasher) const;
  // Adds a record checkNext() passed to the pending list.
  void accept(TakenRecord&& taken, const ingest::ProjectionOptions& projection);
  // Drops the pending records from index `first` on, handing back their
  // messages, and moves the applied head back to the record before.
  std::vector<PendingMessage> dropPendingFrom(std::size_t first);
  // Moves the first `count` pending records out, for a commit.
  std::vector<PendingRecord> takePending(std::size_t count);
};

}  // namespace ledger::fleet
