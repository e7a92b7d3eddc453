// The daemon's HTTP endpoints, served by cpp-httplib on its own threads:
//   GET /healthz  200 "ok" while the daemon works; 503 once it is failing
//   GET /readyz   200 once every served resource has synced; else 503 and
//                 the resources still syncing, one per line
//   GET /metrics  Prometheus text format 0.0.4 (Metrics::render), followed
//                 by the text of the optional `extraMetrics` provider
//
// Address: "HOST:PORT", "[V6]:PORT", or ":PORT" for every interface; port 0
// picks a free one (port() tells which). The daemon's default is loopback.
//
// Ownership: borrows Metrics, which must outlive the server; owns the
// provider, whose captures must outlive the server. Thread safety:
// start()/stop() from the owner; handlers run on the server's threads, so
// the provider is called from several threads at once and must lock what it
// reads. It must return complete exposition lines (HELP/TYPE and samples),
// none named like the daemon's own; an exception it throws becomes a 500.
// Errors: start() throws std::runtime_error when the address is malformed or
// cannot be bound.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "ingest/kube/metrics.h"

namespace httplib {
class Server;
}

namespace ledger::kube {

class HealthServer {
 public:
  // `healthy` is asked on each /healthz; `extraMetrics` (may be empty) on
  // each /metrics, with the time of the request (ns since the epoch).
  using MetricsProvider = std::function<std::string(std::int64_t nowNs)>;
  HealthServer(Metrics& metrics, std::function<bool()> healthy, MetricsProvider extraMetrics = {});
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  void start(const std::string& address);
  void stop();  // idempotent
  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  Metrics& metrics_;
  std::function<bool()> healthy_;
  MetricsProvider extraMetrics_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string host_;
  int port_ = 0;
};

}  // namespace ledger::kube
