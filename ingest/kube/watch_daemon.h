// The sidecar daemon: one Informer per watched resource, one LedgerWriter,
// and the health/metrics endpoints, started and stopped together.
//
// start() reads each resource's committed cursor ("watch:<id>") so that a
// restart resumes exactly where the last commit left off. stop() ends the
// watches, records and commits everything they had received, and closes the
// endpoints; the ledger can then be closed. On a full disk the daemon keeps
// running and retries (LedgerWriter); a stop meanwhile does not wait for
// space: it fails the writer, naming the events left uncommitted.
//
// Ownership: borrows the Ledger (it must outlive the daemon); owns the rest.
// Thread safety: start()/stop() from one thread; failed(), metrics() from
// any. Errors: start() throws std::runtime_error when --listen cannot be
// bound and ingest::LedgerError when the cursors cannot be read; a ledger
// write failure while running shows as failed() (the caller then stops the
// daemon and exits 4, or 3 for corruption), except a full disk, which shows
// as 503 on /readyz until a commit succeeds again.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "ingest/kube/health_server.h"
#include "ingest/kube/informer.h"
#include "ingest/kube/kube_config.h"
#include "ingest/kube/ledger_writer.h"
#include "ingest/kube/metrics.h"
#include "ingest/kube/resource_list.h"
#include "ledger/ledger.h"

namespace ledger::kube {

inline constexpr const char* kDefaultListen = "127.0.0.1:9477";

struct DaemonOptions {
  ClusterConfig cluster;
  std::vector<ResourceSpec> resources;
  WriterOptions writer;
  InformerOptions informer;
  std::string listen = kDefaultListen;  // empty: no HTTP endpoints
  // Appended to /metrics (HealthServer's contract); may be empty. The
  // writer's hook after each commit is writer.afterCommit.
  HealthServer::MetricsProvider extraMetrics;
};

class WatchDaemon {
 public:
  WatchDaemon(Ledger& ledger, DaemonOptions options);
  ~WatchDaemon();
  WatchDaemon(const WatchDaemon&) = delete;
  WatchDaemon& operator=(const WatchDaemon&) = delete;

  void start();
  void stop();  // idempotent

  bool failed() const { return writer_.failed(); }
  Status failure() const { return writer_.failure(); }
  int listenPort() const { return server_.port(); }
  Metrics& metrics() { return metrics_; }
  const ingest::IngestStats& stats() const { return writer_.stats(); }

 private:
  Ledger& ledger_;
  DaemonOptions options_;
  Metrics metrics_;
  LedgerWriter writer_;
  HealthServer server_;
  std::vector<std::unique_ptr<Informer>> informers_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
};

}  // namespace ledger::kube
