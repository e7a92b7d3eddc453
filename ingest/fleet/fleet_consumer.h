// The fleet ledger: reads every cluster's shipped records from a JetStream
// stream (publisher.h) and keeps one ledger per cluster under DIR/<cluster>/
// whose records, seqs and chain are the source's.
//
// Each cluster's records are applied strictly in seq order, and each is
// checked before anything of it is committed (cluster_copy.h): it decodes,
// names a cluster, chains onto the copy's previous record and would be
// stored as shipped. A message that fails is *refused*: terminated on the
// stream (JetStream's AckTerm, never redelivered), logged with its stream
// sequence and counted (refused_messages.h), and nothing of it is written,
// not even a directory for a cluster the fleet had not seen. The run goes
// on with every other message: a refused message never stops the fleet.
// A repeat of a record already applied is acknowledged after its hash is
// compared with the stored one (a different record there is refused).
//
// A record ahead of its cluster's next seq is held in memory for the ones
// before it, within a window of seqs past the copy's head (beyond it: refused)
// and a bound on the bytes and count held across clusters (past it: the
// message is handed back to JetStream to come again later). When the stream
// has nothing more and the missing records have not come, the range is a
// gap (records expired from the stream before the fleet read them):
// reported, never skipped, and filled once the cluster publishes them again
// (`ledger-replay publish --from-seq N`).
//
// Caught up means JetStream's count of messages it has not delivered to the
// durable is 0 (an empty fetch alone is not: it also happens during an
// outage or after the process was stopped). A durable or stream deleted
// under a running consumer is created again (the durable from the stream's
// start; what the copies hold comes again as repeats) and caught up.
//
// Exactly once: a fetched batch is appended to each cluster's ledger (with
// the stream position as the cursor "nats:<stream>") and only then
// acknowledged. The consumer is durable: at start it is created again at
// its acknowledgement floor, so what a killed consumer had fetched but not
// acknowledged comes again at once, and what it had committed is dropped as
// a repeat.
//
// Ownership: owns its ledgers and NATS connection. Thread safety: run()
// on one thread; gaps(), clusters(), refusedCount() and metricsText() from
// any.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ingest/fleet/cluster_copy.h"
#include "ingest/fleet/head_signature.h"
#include "ingest/fleet/nats_link.h"
#include "ingest/fleet/refused_messages.h"
#include "ingest/projector.h"
#include "ledger/ledger.h"

namespace ledger::fleet {

struct FleetConsumerOptions {
  NatsOptions nats;
  StreamSettings stream;  // created when absent, as the publisher does
  std::string durable = "fleet";
  // The subjects this consumer reads: every cluster's, or one cluster's
  // (ledger.<cluster>.records) to shard a fleet over several consumers,
  // each with its own durable, sharing one fleet directory.
  std::string filterSubject = "ledger.*.records";
  std::size_t batch = 1000;  // messages per fetch
  std::chrono::milliseconds fetchWait{500};
  // Records held ahead of their clusters' next seqs, at most, in count and
  // in payload bytes across clusters; past either, a message comes again
  // later instead of being held.
  std::size_t maxHeld = 200000;
  std::size_t maxHeldBytes = 64u << 20;
  // A record more than this many seqs past its copy's head is refused.
  std::uint64_t seqWindow = 1000000;
  bool sync = true;  // fsync each cluster's commits
  // The keys of the clusters the fleet trusts (head_signature.h); null: the
  // copies are unsigned, every cluster's records are taken on their chain
  // alone. With keys, a record is committed only once a good signature of
  // its cluster covers it, and a cluster without a key is refused.
  std::shared_ptr<const TrustedKeys> trustedKeys;
  ingest::ProjectionOptions projection;
  // Each time the stream has nothing left for the consumer (readiness), and
  // each time the durable or the stream is found gone (not ready until the
  // next onCaughtUp).
  std::function<void()> onCaughtUp;
  std::function<void()> onGone;
  // After each commit of a cluster's copy: its first and last new seq.
  std::function<void(const std::string& cluster, Ledger& copy, std::uint64_t first,
                     std::uint64_t last)>
      afterCommit;
};

// Records a cluster's copy lacks though later ones arrived: [first, last].
struct FleetGap {
  std::string cluster;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

class FleetConsumer {
 public:
  // Opens the cluster ledgers already under `dir` (created if absent) that
  // the filter subject covers.
  // Throws FleetError(kLedger) for one that cannot be opened, kConfig for
  // bad NATS options.
  FleetConsumer(std::string dir, FleetConsumerOptions options);
  ~FleetConsumer();
  FleetConsumer(const FleetConsumer&) = delete;
  FleetConsumer& operator=(const FleetConsumer&) = delete;

  // Applies records until `stop` is set or, with `exitWhenIdle`, until the
  // consumer has nothing pending and nothing arrived for that long. NATS
  // outages are waited out; refused messages are counted, not thrown.
  // Throws FleetError (kLedger; kTransport when a batch run gives up).
  void run(const std::atomic<bool>& stop, std::optional<std::chrono::milliseconds> exitWhenIdle);

  std::vector<FleetGap> gaps() const;
  // Each cluster's copy and its last seq.
  std::map<std::string, std::uint64_t> clusters() const;
  // ledger_fleet_* metrics in Prometheus' text format.
  std::string metricsText(std::int64_t nowNs) const;
  // Whether the stream had nothing left for the consumer at the last look:
  // JetStream's count of what it has not delivered, not an empty fetch.
  bool caughtUp() const { return caughtUp_.load(); }
  // Messages refused since the consumer started.
  std::uint64_t refusedCount() const { return refused_.total(); }

 private:
  // One fetch: the messages to acknowledge once its records are
  // committed, and the stream's count of what it has not delivered after
  // the last message taken.
  struct Batch {
    std::vector<OwnedMsg> toAck;
    std::uint64_t pendingAfter = 1;
  };
  struct RunState;

  ClusterCopy& copyFor(const std::string& cluster);
  // Opens the copy's ledger, creating its directory when absent.
  std::unique_ptr<Ledger> openLedger(const std::string& cluster);
  void openExisting();
  // (Re)creates the durable at its acknowledgement floor and subscribes.
  void subscribe();
  // One round of run(): false when the run is over.
  bool step(RunState& state, std::optional<std::chrono::milliseconds> exitWhenIdle);
  void take(OwnedMsg msg, Batch& batch);
  // A decoded record: acknowledged as a repeat, applied, held or refused.
  void place(ClusterCopy& copy, TakenRecord taken, Batch& batch);
  // Applies the held records that are now next.
  void releaseHeld(ClusterCopy& copy, Batch& batch);
  void hold(ClusterCopy& copy, TakenRecord taken);
  bool verified(const ClusterCopy& copy, std::uint64_t seq, const Digest& hash,
                const std::optional<Signature>& signature) const;
  // Signed copies: finds the first pending record whose signature does not
  // verify (by halves: the good ones are a prefix), and drops (refuses) it
  // and every record after it. True when something was dropped.
  bool disputePending(ClusterCopy& copy);
  // The pending records a good signature covers, counted from the first.
  std::size_t vouchedPending(ClusterCopy& copy);
  void refuseFrom(ClusterCopy& copy, std::size_t first);
  void refuse(natsMsg* msg, const std::string& cluster, RefusalReason reason,
              std::uint64_t streamSeq, const std::string& detail);
  void commit(Batch& batch);
  void commitCopy(ClusterCopy& copy);
  // Forgets clusters that have no copy and nothing held.
  void forgetStrangers();
  void noteGaps();
  void setCaughtUp(bool caughtUp);
  // The durable or the stream is gone (deleted, or lost with a server's
  // state): drops the subscription, so the next step creates them again,
  // and is not caught up (onGone) until it has read up to the stream's end.
  void lostDurable(const std::string& why);
  // The messages the stream holds for the durable and has not delivered;
  // nullopt when the durable or the stream is gone. Throws
  // FleetError(kTransport) when JetStream does not answer.
  std::optional<std::uint64_t> undeliveredCount();

  std::string dir_;
  FleetConsumerOptions options_;
  std::unique_ptr<NatsLink> link_;
  struct Subscription;
  std::unique_ptr<Subscription> subscription_;
  mutable std::mutex mu_;  // guards copies_' seqs and gaps_ for the readers
  std::map<std::string, std::unique_ptr<ClusterCopy>> copies_;
  std::vector<FleetGap> gaps_;
  std::atomic<bool> caughtUp_{false};
  std::atomic<std::uint64_t> refetches_{0};
  RefusedMessages refused_;
  std::size_t heldCount_ = 0;
  std::size_t heldBytes_ = 0;
  bool warnedHeldFull_ = false;
  RecordEncoder encoder_;
  Sha256 hasher_;
};

}  // namespace ledger::fleet
