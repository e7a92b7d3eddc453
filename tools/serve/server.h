// `ledger-query serve`: one long-running process that keeps a ledger open
// read-only and answers over HTTP (kube_api.h under /at/{TIME}/, the
// ledger's JSON under /ledger/v1/, the web view at /). With a fleet
// directory it serves every cluster's copy in it, each with that whole API
// under /clusters/NAME/, and the fleet's overview at / (fleet_paths.h,
// fleet_overview.h).
//
// Follows a live writer: every `followMs` it opens the ledger (each copy)
// again when more records were committed, and requests after that see them
// (a request keeps the ledger it started with, served_ledger.h); a copy
// that appears in the fleet directory is served from then on. Listens on
// loopback unless told otherwise; any other address needs TLS and, over
// it, a bearer token (--token-file, compared in constant time) or client
// certificates, since the ledger holds Pod specs and their environment. Every request is logged
// with its method, path, status and time. Every answer states the ledger's
// newest verification (proof_watch.h): a Ledger-Proof header, a Warning
// header while it failed, the JSON members in /ledger/v1/ answers; serve
// answers while it failed (many readers see the warning; the CLI refuses).
//
// Slow and malformed clients: every connection is answered on a thread of
// its own (connection_threads.h), so clients that never finish a request
// delay no one else until they hold kMaxConnections, and one address holds
// at most maxConnectionsPerAddress of those (more are answered 503 at
// once), so clients elsewhere are answered however many one opens; each read of a
// request (line, headers, body, TLS handshake) times out after
// kReadTimeout; a body-carrying method without Content-Length or
// Transfer-Encoding has no body and is answered at once.
//
// Ownership: owns the server, its threads and the open ledgers. start() and
// stop() from one thread; handlers run on the server's threads. Errors:
// start() throws std::invalid_argument for options that would expose the
// ledger or a malformed address, std::runtime_error when the ledger cannot
// be opened or the address bound; a fleet's copy that cannot be opened is
// logged and tried again every `followMs`. With the archive of a cut ledger,
// a request about a moment before the cut is answered from the archive, as
// `ledger-query --archive` answers it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ledger/ledger.h"
#include "tools/serve/api_request.h"
#include "tools/serve/serve_context.h"
#include "tools/serve/served_ledger.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ledger::serve {

struct ServeOptions {
  std::string ledgerDir;
  // The archive of a cut ledger (ledger-replay archive), which answers the
  // moments before its cut (momentBeforeCut); the caller checked that it
  // holds the ledger's link. Without a fleet only; empty: none.
  std::string archiveDir;
  // Set: serve the fleet's copies (fleetCopies lists them, name and
  // directory, as `ledger-query --fleet` finds them), ledgerDir unused;
  // copySigned says whether a copy carries its cluster's head signature.
  std::string fleetDir;
  std::function<std::vector<std::pair<std::string, std::string>>()> fleetCopies;
  std::function<bool(const Ledger&)> copySigned;
  std::string listen = "127.0.0.1:9480";
  std::string tokenFile;
  std::string tlsCert, tlsKey, tlsClientCa;
  int followMs = 1000;  // how often to look for new commits
  // Connections one client address may hold at once (0: no bound); see
  // connection_threads.h.
  std::size_t maxConnectionsPerAddress = 64;
};

class LedgerServer {
 public:
  LedgerServer(ServeOptions options, QueryRunner query);
  ~LedgerServer();
  LedgerServer(const LedgerServer&) = delete;
  LedgerServer& operator=(const LedgerServer&) = delete;

  void start();
  void stop();  // idempotent
  int port() const { return port_; }

 private:
  bool fleet() const { return !options_.fleetDir.empty(); }
  // Throws std::invalid_argument when listening on `host` would expose the
  // ledger (see above).
  void checkExposure(const std::string& host, bool tls) const;
  void answer(const httplib::Request& req, httplib::Response& res);
  // A request `request` (its path as the ledger's own serve reads it) on one ledger.
  void answerLedger(ServedLedger& served, const ApiRequest& request, httplib::Response& res);
  // server_fleet.cpp: a request to a fleet serve; the copy a cluster name
  // names (null: none, `known` then the fleet's names); the copies not yet
  // served opened (one that cannot be is tried again on the next call);
  // the body of /ledger/v1/clusters.
  void answerFleet(ApiRequest request, httplib::Response& res);
  ServedLedger* findCopy(const std::string& cluster, std::vector<std::string>* known) const;
  void addNewCopies();
  std::string clustersJson();
  void follow();

  // Connection threads: kept for the server's life, at most at once, and
  // how long an extra one waits for a connection before it ends.
  static constexpr std::size_t kKeptThreads = 8;
  static constexpr std::size_t kMaxConnections = 512;
  static constexpr std::chrono::seconds kIdleThreadLimit{30};
  static constexpr std::chrono::seconds kReadTimeout{5};
  static constexpr std::size_t kMaxRequestBody = 64 << 10;

  ServeOptions options_;
  QueryRunner query_;
  std::string token_;
  std::unique_ptr<ServedLedger> single_;   // without a fleet
  std::unique_ptr<ServedLedger> archive_;  // its archive (ServeOptions::archiveDir)
  // With a fleet: its copies by cluster name; added to, never removed from,
  // so a pointer to one lives as long as the server.
  mutable std::mutex copiesMu_;
  std::map<std::string, std::unique_ptr<ServedLedger>> copies_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_, follower_;
  std::atomic<bool> stopping_{false};
  int port_ = 0;
};

}  // namespace ledger::serve
