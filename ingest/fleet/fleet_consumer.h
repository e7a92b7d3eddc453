// The fleet ledger: reads every cluster's shipped records from a JetStream
// stream (publisher.h) and keeps one ledger per cluster under DIR/<cluster>/
// whose records, seqs and chain are the source's.
//
// Each cluster's records are applied strictly in seq order. A record whose
// chain hash is not SHA-256 of the copy's last hash and the record's bytes
// (altered on the way, or from another ledger under the same cluster name)
// is refused: FleetError(kRefused) naming the cluster and seq, the copy left
// as it was. A repeat of a record already applied is dropped after its hash
// is compared with the stored one (a different record at a seq already
// applied is refused the same way). A record ahead of its cluster's next
// seq waits in memory for the ones before it; when the stream has nothing
// more and they have not come, the range is a gap (records expired from
// the stream before the fleet read them): reported, never skipped, and
// filled once the cluster publishes them again (`ledger-replay publish
// --from-seq N`).
//
// Exactly once: a fetched batch is appended to each cluster's ledger (with
// the stream position as the cursor "nats:<stream>") and only then
// acknowledged. The consumer is durable: at start it is created again at
// its acknowledgement floor, so what a killed consumer had fetched but not
// acknowledged comes again at once, and what it had committed is dropped as
// a repeat.
//
// Ownership: owns its ledgers and NATS connection. Thread safety: run()
// on one thread; gaps(), clusters() and metricsText() from any.
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

#include "ingest/fleet/nats_link.h"
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
  // Records held for a cluster ahead of its next seq, at most; past it the
  // run stops with the gap (kGap), as nothing can be applied before it.
  std::size_t maxWaiting = 200000;
  bool sync = true;  // fsync each cluster's commits
  ingest::ProjectionOptions projection;
  // Each time a fetch finds nothing pending (readiness: caught up once).
  std::function<void()> onCaughtUp;
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
  // outages are waited out. Throws FleetError (kRefused, kLedger, kGap).
  void run(const std::atomic<bool>& stop, std::optional<std::chrono::milliseconds> exitWhenIdle);

  std::vector<FleetGap> gaps() const;
  // Each cluster's copy and its last seq.
  std::map<std::string, std::uint64_t> clusters() const;
  // ledger_fleet_* metrics in Prometheus' text format.
  std::string metricsText(std::int64_t nowNs) const;
  // Whether the last fetch found the consumer caught up.
  bool caughtUp() const { return caughtUp_.load(); }

 private:
  struct ClusterCopy;
  struct Batch;

  ClusterCopy& copyFor(const std::string& cluster);
  void openExisting();
  // (Re)creates the durable at its acknowledgement floor and subscribes.
  void subscribe();
  void apply(Batch& batch);
  void commit(Batch& batch);
  void noteGaps();

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
};

}  // namespace ledger::fleet
