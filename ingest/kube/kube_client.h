// HTTP requests to the Kubernetes API server with libcurl: GETs of whole
// responses (discovery, LIST pages) and streamed ones (WATCH, chunked), and
// POSTs of a JSON object (creating an Event).
//
// Each request runs on the client's own curl multi handle so that a blocked
// transfer wakes at once when interrupt() is called (shutdown), and so that a
// stream that stays silent longer than its idle timeout is cut (a stalled
// connection). Connections are reused between requests of one client. TCP
// keep-alive probes detect dead peers on long watches.
//
// Authentication and TLS come from the ClusterConfig: bearer token (a token
// file is re-read before each request, so rotated service-account tokens are
// picked up), basic auth, client certificate and key (file or PEM data), CA
// (file or PEM data), or no verification only when the config says
// insecureSkipTlsVerify.
//
// Ownership: owns its curl handles. Thread safety: one thread issues requests;
// interrupt() may be called from any thread. Errors: get() and stream() throw
// TransportError when no HTTP response arrives (connection refused or reset,
// TLS failure, timeout, stall, a body cut short) and Interrupted once
// interrupt() was called; so does post(). An HTTP error status is not an
// exception (the caller reads `status`). The constructor throws ConfigError for unreadable
// credentials files.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ingest/kube/kube_config.h"

namespace ledger::kube {

class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No data for longer than the idle timeout.
class StallError : public TransportError {
 public:
  using TransportError::TransportError;
};

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

struct HttpResponse {
  long status = 0;
  std::string body;  // for stream(): only a non-2xx body (the API's Status), capped
  bool stoppedByReader = false;
};

class KubeClient {
 public:
  explicit KubeClient(ClusterConfig config);
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // GET `path` ("/api/v1/pods?limit=500") and return the whole body.
  HttpResponse get(const std::string& path, std::chrono::milliseconds timeout);

  // POST `json` (Content-Type application/json) to `path` and return the
  // whole response body (the created object, or the API's Status).
  HttpResponse post(const std::string& path, const std::string& json,
                    std::chrono::milliseconds timeout);

  // GET `path` and hand each piece of a 2xx body to `onBody` as it arrives;
  // onBody returns false to end the stream early (stoppedByReader).
  // `onHeaders` (may be empty) is called with the status once the response
  // headers are in. Returns when the server ends the response. Throws
  // StallError when nothing arrives for `idleTimeout`, TransportError when
  // the connection breaks.
  HttpResponse stream(const std::string& path, std::chrono::milliseconds idleTimeout,
                      const std::function<bool(std::string_view)>& onBody,
                      const std::function<void(long status)>& onHeaders = {});

  // Wakes a blocked request, which throws Interrupted; so do all later ones.
  void interrupt();
  bool interrupted() const { return interrupted_.load(); }

  const ClusterConfig& config() const { return config_; }

 private:
  struct Handles;
  HttpResponse perform(const std::string& path, const std::string* postBody,
                       std::chrono::milliseconds timeout, std::chrono::milliseconds idleTimeout,
                       const std::function<bool(std::string_view)>* onBody,
                       const std::function<void(long)>* onHeaders);

  ClusterConfig config_;
  std::unique_ptr<Handles> handles_;
  std::atomic<bool> interrupted_{false};
};

}  // namespace ledger::kube
