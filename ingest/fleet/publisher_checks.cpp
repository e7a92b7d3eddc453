// Where the publisher (publisher.h) checks the stream instead of trusting
// it: the last message on its subject before it resumes, and the message
// JetStream holds under a record's id when it answers "duplicate". Anyone
// who may publish on the stream can put a message there.
#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/publisher.h"
#include "ingest/fleet/shipped_record.h"

namespace ledger::fleet {

void Publisher::resumeFromStream() {
  // The mark says what this ledger's stream acknowledged; a stream created
  // anew or purged since holds less, and gets the rest again. The last
  // message on the subject counts only if it is this ledger's record at
  // its seq: anyone who may publish there can leave a message claiming any
  // seq, and trusting it would send the whole history again.
  const NatsLink::ShippedHead held = link_->lastShipped(options_.stream.name, options_.cluster);
  if (held.present && held.seq >= mark_.load()) return;
  if (held.present) {
    Digest own{};
    bool found = false;
    if (held.seq <= ledger_.lastSeq()) {
      Status st = ledger_.scanLogBytes(held.seq, held.seq,
                                       [&](std::uint64_t, const Digest& h, std::string_view) {
                                         own = h;
                                         found = true;
                                         return false;
                                       });
      if (!st.isOk()) throw FleetError("reading the record the stream holds last", st);
    }
    if (!found || !held.chainHash || *held.chainHash != own) {
      spdlog::warn(
          "stream {}: the last message on {} claims seq {} but is not this ledger's record "
          "there; resuming after the stored mark, seq {}",
          options_.stream.name, subject_, held.seq, mark_.load());
      return;
    }
  }
  spdlog::warn(
      "stream {} holds cluster {}'s records only through seq {}, but seq {} was acknowledged "
      "(a new or purged stream): publishing again from seq {}",
      options_.stream.name, options_.cluster, held.seq, mark_.load(), held.seq + 1);
  next_ = held.seq + 1;
  mark_ = held.seq;
}

std::uint64_t Publisher::checkDuplicates(std::uint64_t first, std::uint64_t last) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> duplicates;
  {
    std::lock_guard lock(acks_->mu);
    duplicates.swap(acks_->duplicates);
  }
  std::sort(duplicates.begin(), duplicates.end());
  for (const auto& [seq, streamSeq] : duplicates) {
    if (seq < first || seq > last) continue;
    try {
      if (!resendSquatted(seq, streamSeq)) return seq;
    } catch (const FleetError& e) {
      if (e.kind() != FleetError::Kind::kTransport) throw;
      lastError_ = e.what();
      return seq;
    }
  }
  return 0;
}

bool Publisher::resendSquatted(std::uint64_t seq, std::uint64_t streamSeq) {
  Digest hash{};
  std::string bytes;
  Status st =
      ledger_.scanLogBytes(seq, seq, [&](std::uint64_t, const Digest& h, std::string_view b) {
        hash = h;
        bytes.assign(b);
        return false;
      });
  if (!st.isOk()) throw FleetError("reading a record to publish", st);
  const auto stored = link_->storedMessage(options_.stream.name, streamSeq);
  if (stored && stored->subject == subject_ && stored->chainHash == hash) return true;  // ours
  // Another message took the record's id (anyone who may publish on the
  // stream can): the record goes in under an id naming its hash too,
  // which the squatter cannot know before the record is published.
  const std::string id = hashedMessageId(options_.cluster, seq, hash);
  spdlog::error(
      "stream {} holds message {} under id {}, which is not this ledger's seq {}: publishing it "
      "again as {}",
      options_.stream.name, streamSeq, messageId(options_.cluster, seq), seq, id);
  Record record;
  if (Status d = decodeRecord(bytes, &record); !d.isOk()) {
    throw FleetError("reading a record to publish", Status::corruption(d.message()));
  }
  natsMsg* msg = nullptr;
  natsStatus s = static_cast<natsStatus>(makeMessage(seq, hash, bytes, record.timeNs, &msg));
  jsPubAck* ack = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  if (s == NATS_OK) {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MsgId = id.c_str();
    po.ExpectStream = options_.stream.name.c_str();
    s = js_PublishMsg(&ack, link_->jetStream(), msg, &po, &code);
  }
  natsMsg_Destroy(msg);
  if (s != NATS_OK) {
    throw FleetError(FleetError::Kind::kTransport, "publishing seq " + std::to_string(seq) +
                                                       " as " + id + ": " + natsErrorText(s));
  }
  const bool duplicate = ack->Duplicate;
  const std::uint64_t at = ack->Sequence;
  jsPubAck_Destroy(ack);
  if (!duplicate) return true;
  const auto again = link_->storedMessage(options_.stream.name, at);
  return again && again->subject == subject_ && again->chainHash == hash;
}

}  // namespace ledger::fleet
