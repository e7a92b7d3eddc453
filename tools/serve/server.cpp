#include "tools/serve/server.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ingest/net/listen_address.h"
#include "ledger/sha256.h"
#include "schema/k8s/rfc3339.h"
#include "tools/serve/api_error.h"
#include "tools/serve/connection_threads.h"
#include "tools/serve/kube_api.h"
#include "tools/serve/ledger_api.h"
#include "tools/serve/moment.h"
#include "tools/serve/watch_stream.h"
#include "tools/serve/web_assets.h"

namespace ledger::serve {

namespace {

std::string readToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("--token-file " + path + ": cannot be read");
  std::stringstream s;
  s << in.rdbuf();
  std::string token = s.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) throw std::invalid_argument("--token-file " + path + " is empty");
  return token;
}

// Constant time in the token's content: both sides hashed to equal length.
bool tokenMatches(const std::string& expected, std::string_view header) {
  constexpr std::string_view kBearer = "Bearer ";
  if (!header.starts_with(kBearer)) return false;
  const Digest a = Sha256::of(expected);
  const Digest b = Sha256::of(header.substr(kBearer.size()));
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The key under which an answer about a past moment is kept (empty: not
// kept). A moment inside the history cannot change: the record after it is
// later than it, and every new record is later still. `now`, and a time at
// or after the last record, can. The key names the seq and the time (AGE is
// counted to it), the rest of the path, the query and the form asked.
std::string cacheKey(const ApiRequest& req, const ServeContext& ctx) {
  if (req.method != "GET" || !req.path.starts_with("/at/")) return {};
  if (req.path.find("/watch/") != std::string::npos || req.param("watch")) return {};
  const auto end = req.path.find('/', 4);
  if (end == std::string::npos) return {};
  const std::string text = req.path.substr(4, end - 4);
  Moment m;
  try {
    m = resolveMoment(text, ctx.ledger, ctx.nowNs);
  } catch (const ApiError&) {
    return {};
  }
  if (m.now || (!text.starts_with("seq:") && m.seq >= ctx.ledger.lastSeq())) return {};
  const TableRequest table = wantsTable(req.accept);
  std::string key = std::to_string(m.seq) + "@" + std::to_string(m.timeNs) + req.path.substr(end);
  for (const auto& [k, v] : req.query) key += "&" + k + "=" + v;
  key += table.table ? "|" + table.apiVersion : "|json";
  return key;
}

// The moment a request asks about: the {TIME} of /at/{TIME}/..., or a
// /ledger/v1/ question's `at`; "now" when it names none.
std::string momentText(const ApiRequest& req) {
  if (req.path.starts_with("/at/")) {
    const auto end = req.path.find('/', 4);
    return req.path.substr(4, end == std::string::npos ? end : end - 4);
  }
  if (req.path.starts_with("/ledger/v1/")) return req.param("at").value_or("now");
  return "now";
}

void sendError(httplib::Response& res, const ApiError& e) {
  res.status = e.code();
  res.set_content(statusJson(e), std::string(kJsonType).c_str());
}

}  // namespace

LedgerServer::LedgerServer(ServeOptions options, QueryRunner query)
    : options_(std::move(options)), query_(std::move(query)) {}

LedgerServer::~LedgerServer() { stop(); }

void LedgerServer::answer(const httplib::Request& req, httplib::Response& res) {
  if (!token_.empty() && !tokenMatches(token_, req.get_header_value("Authorization"))) {
    sendError(res, ApiError::unauthorized("a valid bearer token is required"));
    return;
  }
  ApiRequest request;
  request.method = req.method;
  request.path = req.path;
  request.query.insert(req.params.begin(), req.params.end());
  request.accept = req.get_header_value("Accept");
  if (fleet()) {
    answerFleet(std::move(request), res);
  } else if (archive_ && momentBeforeCut(momentText(request), *single_->current()->ledger)) {
    answerLedger(*archive_, request, res);
  } else {
    answerLedger(*single_, request, res);
  }
}

void LedgerServer::answerLedger(ServedLedger& served, const ApiRequest& request,
                                httplib::Response& res) {
  auto snap = served.current();
  // Read for every answer, outside the answer cache: a verification made
  // while serving is stated at once, also on answers about past moments.
  const ProofState proof = served.proof();
  res.set_header("Ledger-Proof", proof.line());
  if (const std::string w = proof.warning(); !w.empty()) res.set_header("Warning", w);
  ServeContext ctx{*snap->ledger,    snap->catalog, served.states(), query_,
                   served.answers(), nowNs(),       &proof};
  try {
    if (const std::string w = momentWarning(request.path, ctx.ledger, ctx.nowNs); !w.empty()) {
      res.set_header("Warning", w);
    }
    ApiResponse response;
    if (const std::string key = cacheKey(request, ctx); !key.empty()) {
      // "status\ncontent type\nbody"
      const auto cached = served.answers().get(key, [&] {
        ApiResponse a = handleKubeRequest(request, ctx);
        return std::to_string(a.status) + "\n" + a.contentType + "\n" + a.body;
      });
      const auto nl1 = cached->find('\n');
      const auto nl2 = cached->find('\n', nl1 + 1);
      res.status = std::stoi(cached->substr(0, nl1));
      res.set_content(cached->data() + nl2 + 1, cached->size() - nl2 - 1,
                      cached->substr(nl1 + 1, nl2 - nl1 - 1).c_str());
      return;
    }
    if (request.path.starts_with("/at/")) {
      response = handleKubeRequest(request, ctx);
    } else if (request.path.starts_with("/ledger/v1/")) {
      response = handleLedgerRequest(request, ctx);
    } else if (const WebAsset* asset = findWebAsset(request.path);
               asset != nullptr && request.method == "GET") {
      res.status = 200;
      res.set_content(asset->body.data(), asset->body.size(), std::string(asset->contentType));
      return;
    } else {
      throw ApiError::notFound("path " + request.path +
                               " is not served: the API is under /at/{TIME}/, the ledger's "
                               "answers under /ledger/v1/, the web view at /");
    }
    res.status = response.status;
    if (!response.watch) {
      res.set_content(response.body, response.contentType);
      return;
    }
    auto stream = std::make_shared<WatchStream>(
        *response.watch, [copy = &served] { return copy->current()->ledger; });
    auto initial = std::make_shared<std::string>(std::move(response.body));
    res.set_chunked_content_provider(response.contentType,
                                     [this, stream, initial](std::size_t, httplib::DataSink& sink) {
                                       auto write = [&](std::string_view bytes) {
                                         if (bytes.empty()) return sink.is_writable();
                                         return sink.write(bytes.data(), bytes.size());
                                       };
                                       if (!initial->empty()) {
                                         if (!write(*initial)) return false;
                                         initial->clear();
                                       }
                                       if (stopping_ || !stream->next(write)) {
                                         sink.done();
                                       }
                                       return true;
                                     });
  } catch (const ApiError& e) {
    sendError(res, e);
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", request.method, request.path, e.what());
    sendError(res, ApiError::internal(e.what()));
  }
}

void LedgerServer::checkExposure(const std::string& host, bool tls) const {
  if (!options_.tlsClientCa.empty() && !tls) {
    throw std::invalid_argument("--tls-client-ca needs --tls-cert and --tls-key");
  }
  if (net::isLoopbackHost(host)) return;
  // A bearer token over plain HTTP crosses the network in clear, and kubectl
  // itself sends one over https only.
  if (!tls) {
    throw std::invalid_argument(
        "--listen " + options_.listen +
        " reaches beyond this machine, and the ledger holds Pod specs and their environment: "
        "serve it over TLS (--tls-cert, --tls-key) with --token-file or client certificates "
        "(--tls-client-ca); plain HTTP only on loopback");
  }
  if (token_.empty() && options_.tlsClientCa.empty()) {
    throw std::invalid_argument("--listen " + options_.listen +
                                " reaches beyond this machine: give --token-file, or client "
                                "certificates (--tls-client-ca)");
  }
}

void LedgerServer::start() {
  auto [host, port] = net::parseListenAddress(options_.listen);
  const bool tls = !options_.tlsCert.empty() || !options_.tlsKey.empty();
  if (tls && (options_.tlsCert.empty() || options_.tlsKey.empty())) {
    throw std::invalid_argument("--tls-cert and --tls-key go together");
  }
  if (!options_.tokenFile.empty()) token_ = readToken(options_.tokenFile);
  checkExposure(host, tls);
  if (fleet()) {
    addNewCopies();
  } else {
    single_ = std::make_unique<ServedLedger>(options_.ledgerDir);
    if (!options_.archiveDir.empty())
      archive_ = std::make_unique<ServedLedger>(options_.archiveDir);
  }

  if (tls) {
    server_ = std::make_unique<httplib::SSLServer>(
        options_.tlsCert.c_str(), options_.tlsKey.c_str(),
        options_.tlsClientCa.empty() ? nullptr : options_.tlsClientCa.c_str());
    if (!server_->is_valid()) {
      throw std::runtime_error("--tls-cert/--tls-key/--tls-client-ca: cannot be loaded");
    }
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  server_->new_task_queue = [perAddress = options_.maxConnectionsPerAddress] {
    return new ConnectionThreads(kKeptThreads, kMaxConnections, kIdleThreadLimit, perAddress);
  };
  // Per read of a request's line, headers or body (and of a TLS handshake):
  // a client that stops sending is dropped after this long.
  server_->set_read_timeout(kReadTimeout);
  server_->set_write_timeout(kReadTimeout);
  // kubectl keeps its connection open between requests, and an open
  // connection holds a thread until it idles out.
  server_->set_keep_alive_timeout(2);
  // The API takes no request bodies: a larger one is refused (413), never
  // held in memory (cpp-httplib skips what the client sends of it).
  server_->set_payload_max_length(kMaxRequestBody);
  // The listening socket, seen as it is created (the callback outlives start()).
  auto listening = std::make_shared<int>(-1);
  server_->set_socket_options([listening](socket_t sock) {
    httplib::default_socket_options(sock);
    *listening = sock;
  });
  server_->set_logger([](const httplib::Request& req, const httplib::Response& res) {
    spdlog::info("{} {} {} {}", req.remote_addr, req.method, req.path, res.status);
  });
  const auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    answer(req, res);
  };
  // A request with neither Content-Length nor Transfer-Encoding has no body
  // (RFC 9112, section 6.3), but cpp-httplib reads one from a POST, PUT,
  // PATCH or DELETE until the client closes or the read times out, and the
  // client waits for the answer meanwhile. Such a request is answered here,
  // before any body is read.
  server_->set_pre_routing_handler([handler](const httplib::Request& req, httplib::Response& res) {
    const bool mayHaveBody = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" ||
                             req.method == "DELETE";
    if (!mayHaveBody || req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    handler(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  server_->Get(".*", handler);
  server_->Post(".*", handler);
  server_->Put(".*", handler);
  server_->Patch(".*", handler);
  server_->Delete(".*", handler);
  server_->Options(".*", handler);

  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else {
    port_ = server_->bind_to_port(host, port) ? port : -1;
  }
  if (port_ < 0)
    throw std::runtime_error("--listen " + options_.listen + ": cannot bind (in use?)");
  // The Debian build of cpp-httplib listens with a backlog of 5: a burst of
  // connections past it has its SYNs dropped, and each client waits out TCP's
  // retransmission (1 s, 3 s, 7 s, ...). Listening again raises the backlog.
  if (*listening >= 0) ::listen(*listening, SOMAXCONN);
  listener_ = std::thread([this] { server_->listen_after_bind(); });
  follower_ = std::thread([this] { follow(); });
  if (fleet()) {
    std::lock_guard lock(copiesMu_);
    spdlog::info("serving the fleet {} ({} copies) on {}://{}:{}", options_.fleetDir,
                 copies_.size(), tls ? "https" : "http", host, port_);
  } else {
    spdlog::info("serving {} on {}://{}:{} (seq {})", options_.ledgerDir, tls ? "https" : "http",
                 host, port_, single_->current()->ledger->lastSeq());
  }
}

void LedgerServer::follow() {
  while (!stopping_) {
    for (int waited = 0; waited < options_.followMs && !stopping_; waited += 50) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (stopping_) break;
    std::vector<ServedLedger*> served;
    if (fleet()) {
      try {
        addNewCopies();
      } catch (const std::exception& e) {
        spdlog::warn("following the fleet {}: {}", options_.fleetDir, e.what());
      }
      std::lock_guard lock(copiesMu_);
      for (auto& [name, copy] : copies_) served.push_back(copy.get());
    } else {
      // An archive extended by a later cut is swapped in whole: followed too.
      served.push_back(single_.get());
      if (archive_) served.push_back(archive_.get());
    }
    for (ServedLedger* s : served) {
      try {
        s->refresh();
      } catch (const std::exception& e) {
        spdlog::warn("following the ledger {}: {}", s->directory(), e.what());
      }
    }
  }
}

void LedgerServer::stop() {
  stopping_ = true;
  if (server_) server_->stop();
  if (listener_.joinable()) listener_.join();
  if (follower_.joinable()) follower_.join();
}

}  // namespace ledger::serve
