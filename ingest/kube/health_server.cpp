#include "ingest/kube/health_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <chrono>
#include <stdexcept>
#include <vector>
#include "ingest/net/listen_address.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::kube {

HealthServer::HealthServer(Metrics& metrics, std::function<bool()> healthy,
                           MetricsProvider extraMetrics)
    : metrics_(metrics), healthy_(std::move(healthy)), extraMetrics_(std::move(extraMetrics)) {}

HealthServer::~HealthServer() { stop(); }

namespace {
constexpr std::size_t kWorkers = 64;
}  // namespace

void HealthServer::start(const std::string& address) {
  auto [host, port] = net::parseListenAddress(address);
  server_ = std::make_unique<httplib::Server>();
  // A worker per connection (cpp-httplib): a client that connects and sends
  // nothing holds one for the keep-alive timeout. The kubelet's probes time
  // out after a second (timeoutSeconds' default), so idle or slow
  // connections must neither hold a worker for long nor take all of them:
  // short timeouts, and workers to spare.
  server_->new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  server_->set_read_timeout(std::chrono::milliseconds(500));
  server_->set_write_timeout(std::chrono::seconds(1));
  server_->set_keep_alive_timeout(1);
  server_->set_keep_alive_max_count(4);
  // cpp-httplib's default sets SO_REUSEPORT, which lets a second daemon bind
  // the same port and take half the probes: SO_REUSEADDR only, so it fails.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    const bool ok = healthy_ ? healthy_() : true;
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "failing\n", "text/plain");
  });
  server_->Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    const auto waiting = metrics_.notReady();
    std::string body = waiting.empty() ? "ok\n" : "";
    for (const auto& w : waiting) body += w + "\n";
    res.status = waiting.empty() ? 200 : 503;
    res.set_content(body, "text/plain");
  });
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    const std::int64_t now = nowNs();
    std::string body = metrics_.render(now);
    if (extraMetrics_) body += extraMetrics_(now);
    res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  // ":PORT": every interface, IPv6 and IPv4 when the kernel has IPv6.
  std::vector<std::string> hosts = {host};
  if (host.empty()) hosts = {"::", "0.0.0.0"};
  int bound = -1;
  for (const std::string& h : hosts) {
    bound = port == 0 ? server_->bind_to_any_port(h) : (server_->bind_to_port(h, port) ? port : -1);
    if (bound >= 0) {
      host = h;
      break;
    }
  }
  if (bound < 0) throw std::runtime_error("--listen " + address + ": cannot bind (in use?)");
  port = bound;
  host_ = host;
  port_ = port;
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // cpp-httplib's stop() does nothing until the listening loop runs: a stop
  // right after start would otherwise leave it serving, and its join hang.
  // (Bounded: a loop that ended at once never reports running.)
  for (int i = 0; i < 5000 && !server_->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  spdlog::info("serving /healthz, /readyz and /metrics on {}:{}", host_, port_);
}

void HealthServer::stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace ledger::kube
