#include "ingest/fleet/publisher.h"

#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/shipped_record.h"

namespace ledger::fleet {

std::string Publisher::cursorName(const std::string& stream, const std::string& cluster) {
  return "publish:" + stream + "/" + cluster;
}

Publisher::Publisher(Ledger& ledger, PublisherOptions options)
    : ledger_(ledger),
      options_(std::move(options)),
      acks_(std::make_unique<AckState>()),
      backoff_(options_.backoffInitial) {
  checkClusterName(options_.cluster, "--cluster-name");
  if (options_.window == 0)
    throw FleetError(FleetError::Kind::kConfig, "the window must be positive");
  cursor_ = cursorName(options_.stream.name, options_.cluster);
  subject_ = recordSubject(options_.cluster);
  Cursor saved;
  if (Status st = ledger_.cursor(cursor_, &saved); st.isOk()) {
    mark_ = saved.position;
    saved_ = saved.position;
  } else if (!st.isNotFound()) {
    throw FleetError("reading the publish mark", st);
  }
  next_ = options_.fromSeq.value_or(mark_.load() + 1);
  if (next_ == 0) next_ = 1;
  NatsOptions nats = options_.nats;
  nats.maxPendingPublishes = static_cast<std::int64_t>(options_.window);
  if (nats.name.empty()) nats.name = "ledger-publisher " + options_.cluster;
  AckState* acks = acks_.get();
  nats.onPublishError = [acks](std::uint64_t seq, const std::string& error) {
    std::lock_guard lock(acks->mu);
    // A refusal without a readable seq refuses the whole window.
    const std::uint64_t at = seq >= acks->first && seq <= acks->last ? seq : acks->first;
    acks->firstRefused = std::min(acks->firstRefused, at);
    acks->error = error;
  };
  nats.onDuplicate = [acks](std::uint64_t seq, std::uint64_t streamSeq) {
    std::lock_guard lock(acks->mu);
    acks->duplicates.emplace_back(seq, streamSeq);
  };
  link_ = std::make_unique<NatsLink>(nats);
}

Publisher::~Publisher() { stop(); }

void Publisher::saveMark(std::uint64_t seq) {
  // After a refill (--from-seq) the mark stays where it was until passed.
  if (seq <= mark_.load() && saved_ >= seq) return;
  Cursor c;
  c.position = seq;
  if (Status st = ledger_.putCursor(cursor_, c); !st.isOk()) {
    throw FleetError("writing the publish mark", st);
  }
  saved_ = seq;
  mark_ = std::max(mark_.load(), seq);
}

std::uint64_t Publisher::sendWindow(std::uint64_t first, std::uint64_t last) {
  {
    std::lock_guard lock(acks_->mu);
    acks_->first = first;
    acks_->last = last;
    acks_->firstRefused = UINT64_MAX;
    acks_->error.clear();
    acks_->duplicates.clear();
  }
  std::uint64_t sentThrough = first - 1;
  std::string sendError;
  Status decodeError = Status::ok();
  Record record;  // reused along the window: only its time is sent apart
  Status st = ledger_.scanLogBytes(
      first, last, [&](std::uint64_t seq, const Digest& hash, std::string_view bytes) {
        // A record that does not decode is never shipped: the fleet would
        // refuse it, and the ledger needs `verify` first.
        if (Status d = decodeRecord(bytes, &record); !d.isOk()) {
          decodeError = Status::corruption("seq " + std::to_string(seq) + ": " + d.message());
          return false;
        }
        natsMsg* msg = nullptr;
        natsStatus s = static_cast<natsStatus>(makeMessage(seq, hash, bytes, record.timeNs, &msg));
        if (s == NATS_OK) {
          const std::string id = messageId(options_.cluster, seq);
          jsPubOptions po;
          jsPubOptions_Init(&po);
          po.MsgId = id.c_str();
          po.ExpectStream = options_.stream.name.c_str();
          s = js_PublishMsgAsync(link_->jetStream(), &msg, &po);
        }
        natsMsg_Destroy(msg);  // a no-op once libnats owns it
        if (s != NATS_OK) {
          sendError = natsErrorText(s);
          return false;
        }
        sentThrough = seq;
        return true;
      });
  if (!st.isOk()) throw FleetError("reading records to publish", st);
  if (!decodeError.isOk()) throw FleetError("reading records to publish", decodeError);
  jsPubOptions wait;
  jsPubOptions_Init(&wait);
  wait.MaxWait = options_.ackTimeout.count();
  const natsStatus waited = js_PublishAsyncComplete(link_->jetStream(), &wait);
  std::uint64_t firstUnacked = sentThrough + 1;
  if (waited != NATS_OK) {
    // Take back what was not acknowledged; an acknowledgement that arrives
    // later is dropped, and the records go again (JetStream drops repeats).
    natsMsgList pending{};
    if (js_PublishAsyncGetPendingList(&pending, link_->jetStream()) == NATS_OK) {
      for (int i = 0; i < pending.Count; ++i) {
        const char* seqText = nullptr;
        if (pending.Msgs[i] != nullptr &&
            natsMsgHeader_Get(pending.Msgs[i], kHeaderSeq, &seqText) == NATS_OK) {
          firstUnacked = std::min<std::uint64_t>(firstUnacked, std::strtoull(seqText, nullptr, 10));
        } else {
          firstUnacked = first;
        }
      }
      natsMsgList_Destroy(&pending);
    } else {
      firstUnacked = first;
    }
    if (sendError.empty()) sendError = "no acknowledgement: " + natsErrorText(waited);
  }
  if (const std::uint64_t squatted = checkDuplicates(first, sentThrough); squatted != 0) {
    firstUnacked = std::min(firstUnacked, squatted);
    if (sendError.empty())
      sendError = "another message holds seq " + std::to_string(squatted) + "'s id";
  }
  {
    std::lock_guard lock(acks_->mu);
    if (acks_->firstRefused != UINT64_MAX) {
      firstUnacked = std::min(firstUnacked, acks_->firstRefused);
      sendError = "refused: " + acks_->error;
    }
  }
  if (!sendError.empty()) {
    lastError_ = sendError;
    ++failures_;
  }
  published_ += firstUnacked - first;
  return firstUnacked - 1;
}

int Publisher::makeMessage(std::uint64_t seq, const Digest& hash, std::string_view bytes,
                           std::int64_t timeNs, natsMsg** out) const {
  natsStatus s =
      natsMsg_Create(out, subject_.c_str(), nullptr, bytes.data(), static_cast<int>(bytes.size()));
  if (s != NATS_OK) return s;
  const std::string seqText = std::to_string(seq);
  const std::string timeText = std::to_string(timeNs);
  const std::string hashText = toHex(hash);
  s = natsMsgHeader_Set(*out, kHeaderCluster, options_.cluster.c_str());
  if (s == NATS_OK) s = natsMsgHeader_Set(*out, kHeaderSeq, seqText.c_str());
  if (s == NATS_OK) s = natsMsgHeader_Set(*out, kHeaderTime, timeText.c_str());
  if (s == NATS_OK) s = natsMsgHeader_Set(*out, kHeaderChainHash, hashText.c_str());
  // Every message signed: the consumer checks one signature per batch,
  // the last, which vouches for the rest through the chain, and each one
  // only where a record is disputed.
  if (s == NATS_OK && options_.signingKey) {
    const std::string sig = signatureText(options_.signingKey->sign(options_.cluster, seq, hash));
    s = natsMsgHeader_Set(*out, kHeaderSignature, sig.c_str());
  }
  if (s != NATS_OK) {
    natsMsg_Destroy(*out);
    *out = nullptr;
  }
  return s;
}

bool Publisher::step(std::uint64_t through, const std::atomic<bool>* stop) {
  // The stream is looked at first, even with nothing new to send: the mark
  // may be of a stream that is gone.
  try {
    if (!streamReady_) {
      link_->ensureStream(options_.stream);
      if (!options_.fromSeq) resumeFromStream();
      streamReady_ = true;
    }
  } catch (const FleetError& e) {
    ++failures_;
    if (lastError_ != e.what()) spdlog::warn("publishing to NATS: {}; retrying", e.what());
    lastError_ = e.what();
    sleepFor(backoff_, stop);
    backoff_ = std::min(backoff_ * 2, options_.backoffMax);
    return false;
  }
  const std::uint64_t last = std::min(through, ledger_.lastSeq());
  if (next_ > last) return false;
  const std::uint64_t windowLast = std::min<std::uint64_t>(last, next_ + options_.window - 1);
  const std::uint64_t acked = sendWindow(next_, windowLast);
  if (acked >= next_) saveMark(acked);
  if (acked == windowLast) {
    if (backoff_ != options_.backoffInitial) {
      spdlog::info("publishing to NATS again: through seq {}", acked);
    }
    backoff_ = options_.backoffInitial;
    next_ = acked + 1;
    return true;
  }
  spdlog::warn("publishing seq {}..{} to NATS: {}; {} acknowledged, retrying in {} ms", next_,
               windowLast, lastError_, acked >= next_ ? acked - next_ + 1 : 0, backoff_.count());
  next_ = acked + 1;
  sleepFor(backoff_, stop);
  backoff_ = std::min(backoff_ * 2, options_.backoffMax);
  return false;
}

bool Publisher::publishThrough(std::uint64_t seq, const std::atomic<bool>* stop,
                               std::chrono::steady_clock::time_point deadline) {
  while (!streamReady_ || (next_ <= seq && next_ <= ledger_.lastSeq())) {
    if ((stop != nullptr && stop->load()) || std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    step(seq, stop);
  }
  return true;
}

void Publisher::sleepFor(std::chrono::milliseconds d, const std::atomic<bool>* stop) {
  // In slices: an external stop flag (a signal handler's) notifies nobody.
  const auto until = std::chrono::steady_clock::now() + d;
  std::unique_lock lock(mu_);
  while (!stopping_.load() && !(stop != nullptr && stop->load()) &&
         std::chrono::steady_clock::now() < until) {
    wakeCv_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

void Publisher::start() {
  thread_ = std::thread([this] { run(); });
}

void Publisher::wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  wakeCv_.notify_all();
}

void Publisher::run() {
  try {
    while (!stopping_) {
      if (step(UINT64_MAX, &stopping_)) continue;
      std::unique_lock lock(mu_);
      wakeCv_.wait_for(lock, std::chrono::milliseconds(100),
                       [&] { return stopping_.load() || woken_; });
      woken_ = false;
    }
  } catch (const FleetError& e) {
    spdlog::error("publishing stopped: {}", e.what());
    std::lock_guard lock(mu_);
    failure_ = e.what();
  }
}

void Publisher::stop(std::chrono::milliseconds drain) {
  if (!thread_.joinable()) return;
  if (drain.count() > 0) {
    const auto deadline = std::chrono::steady_clock::now() + drain;
    while (mark_.load() < ledger_.lastSeq() && std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mu_);
        if (failure_) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  stopping_ = true;
  wakeCv_.notify_all();
  thread_.join();
}

std::uint64_t Publisher::lagRecords() const {
  const std::uint64_t head = ledger_.lastSeq();
  const std::uint64_t m = mark_.load();
  return head > m ? head - m : 0;
}

double Publisher::lagSeconds(std::int64_t nowNs) const {
  const std::uint64_t m = mark_.load();
  if (ledger_.lastSeq() <= m) return 0;
  std::int64_t oldest = 0;
  if (!ledger_.timeOf(m + 1, &oldest).isOk()) return 0;
  return nowNs > oldest ? static_cast<double>(nowNs - oldest) / 1e9 : 0;
}

std::optional<std::string> Publisher::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

std::string Publisher::metricsText(std::int64_t nowNs) const {
  std::string out;
  auto gauge = [&](const char* name, const char* type, const char* help, const std::string& value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
           name + " " + value + "\n";
  };
  gauge("ledger_publish_seq", "gauge", "Last seq JetStream acknowledged (the publish mark).",
        std::to_string(mark_.load()));
  gauge("ledger_publish_lag_records", "gauge",
        "Committed records not yet acknowledged by JetStream.", std::to_string(lagRecords()));
  gauge("ledger_publish_lag_seconds", "gauge",
        "Age of the oldest committed record not yet acknowledged by JetStream.",
        std::to_string(lagSeconds(nowNs)));
  gauge("ledger_published_records_total", "counter",
        "Records JetStream acknowledged since the start (repeats included).",
        std::to_string(published_.load()));
  gauge("ledger_publish_connected", "gauge", "1 while connected to a NATS server.",
        link_->connected() ? "1" : "0");
  gauge("ledger_publish_failures_total", "counter",
        "Windows of records JetStream did not acknowledge, and failed stream lookups.",
        std::to_string(failures_.load()));
  return out;
}

}  // namespace ledger::fleet
