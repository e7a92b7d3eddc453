// Ships a ledger's committed records, in seq order, to a NATS JetStream
// stream (shipped_record.h says how each travels), for the fleet's copy of
// this cluster (fleet_consumer.h).
//
// Records go out in windows of asynchronous publishes; a window's records
// count as published once JetStream has acknowledged each. A repeat that
// JetStream dropped as a duplicate counts only once the message it holds
// under that id is this ledger's record (subject and chain hash): anyone who
// may publish on the stream can take an id first, and then the record goes
// in again under `<cluster>:<seq>:<chain hash>` (shipped_record.h). The
// last seq acknowledged without a gap, the publish mark, is kept in the
// ledger as the cursor "publish:<stream>/<cluster>", so a restarted
// publisher resumes after it, or from the stream's last message on its
// subject when that is behind the mark and is this ledger's own record
// there (seq and chain hash), as after a stream was created anew. A window
// that fails (NATS down, a timeout) is sent again from its first
// unacknowledged record after a backoff; JetStream's duplicate window and
// the fleet's seq check drop what was stored twice. Publishing never blocks
// the ledger's writer: it only reads committed records on its own thread.
//
// Ownership: borrows the Ledger, which must outlive the Publisher; owns its
// NATS connection and thread. Thread safety: start()/stop()/publishThrough
// from the owner thread; mark(), lag*() and metricsText() from any.
// Errors: the constructor throws FleetError(kConfig) for bad options; a
// ledger that refuses a read or the mark's write stops publishing with
// FleetError(kLedger) (failure() while running in the background); NATS
// failures are retried for ever and counted, never thrown.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ingest/fleet/head_signature.h"
#include "ingest/fleet/nats_link.h"
#include "ledger/ledger.h"

namespace ledger::fleet {

struct PublisherOptions {
  NatsOptions nats;
  std::string cluster;  // a DNS label (shipped_record.h)
  StreamSettings stream;
  std::size_t window = 1024;  // records in flight at most
  std::chrono::milliseconds ackTimeout{10000};
  std::chrono::milliseconds backoffInitial{250};
  std::chrono::milliseconds backoffMax{10000};
  // Publish from this seq instead of after the mark (a refill of records
  // the stream lost); the mark never moves back.
  std::optional<std::uint64_t> fromSeq;
  // Signs every message (head_signature.h); null: unsigned.
  std::shared_ptr<const SigningKey> signingKey;
};

class Publisher {
 public:
  Publisher(Ledger& ledger, PublisherOptions options);
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // The cursor naming the mark in the ledger.
  static std::string cursorName(const std::string& stream, const std::string& cluster);

  // Follows the ledger on a thread of its own until stop(); wake() after a
  // commit makes it look at once (else it looks every 100 ms).
  void start();
  void wake();
  // Stops the thread; with `drain` > 0 first waits up to that long for
  // everything committed to be published. Idempotent.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds(0));

  // Publishes through `seq` on the calling thread; returns once JetStream
  // has acknowledged every record up to it (true) or `deadline` passed or
  // `stop` was set (false). Throws FleetError(kLedger).
  bool publishThrough(std::uint64_t seq, const std::atomic<bool>* stop,
                      std::chrono::steady_clock::time_point deadline);

  std::uint64_t mark() const { return mark_.load(); }
  std::uint64_t lagRecords() const;
  double lagSeconds(std::int64_t nowNs) const;
  // The background thread's failure (a ledger error), if it stopped on one.
  std::optional<std::string> failure() const;
  // Prometheus exposition of the ledger_publish_* metrics.
  std::string metricsText(std::int64_t nowNs) const;

 private:
  // What JetStream answered for the window in flight: the records it
  // refused and those it called duplicates (the handlers run on libnats'
  // thread, hence the lock).
  struct AckState {
    std::mutex mu;
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::uint64_t firstRefused = UINT64_MAX;
    std::string error;
    // (record seq, stream seq) of each answer "already held under that id".
    std::vector<std::pair<std::uint64_t, std::uint64_t>> duplicates;
  };
  // Sends [first, last] and waits for their acknowledgements; returns the
  // last seq acknowledged without a gap (first - 1 when none).
  std::uint64_t sendWindow(std::uint64_t first, std::uint64_t last);
  // One step: publish the next window if any record waits; false when
  // nothing was sent (caught up, or failed and backing off).
  bool step(std::uint64_t through, const std::atomic<bool>* stop);
  void saveMark(std::uint64_t seq);
  // A record's message, signed with the signing key when there is one; a
  // natsStatus.
  int makeMessage(std::uint64_t seq, const Digest& hash, std::string_view bytes,
                  std::int64_t timeNs, __natsMsg** out) const;
  // The duplicates JetStream answered in [first, last]: each must be this
  // ledger's own message, or is sent again under a hashed id. Returns the
  // first seq that could not be got in, 0 when none.
  std::uint64_t checkDuplicates(std::uint64_t first, std::uint64_t last);
  bool resendSquatted(std::uint64_t seq, std::uint64_t streamSeq);
  // Moves next_ back when the stream holds less of this cluster than the
  // mark says, trusting only a last message that is this ledger's record.
  void resumeFromStream();
  void run();
  void sleepFor(std::chrono::milliseconds d, const std::atomic<bool>* stop);

  Ledger& ledger_;
  PublisherOptions options_;
  std::unique_ptr<NatsLink> link_;
  std::unique_ptr<AckState> acks_;
  std::string cursor_;
  std::string subject_;
  std::atomic<std::uint64_t> mark_{0};
  std::uint64_t saved_ = 0;  // the mark as the ledger holds it
  std::uint64_t next_ = 1;
  bool streamReady_ = false;
  std::chrono::milliseconds backoff_;
  std::atomic<std::uint64_t> failures_{0};
  std::atomic<std::uint64_t> published_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable wakeCv_;
  bool woken_ = false;
  std::optional<std::string> failure_;
  std::string lastError_;
};

}  // namespace ledger::fleet
