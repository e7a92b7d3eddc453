// A connection to NATS with its JetStream context, through the official C
// client (libnats): the fleet's one way to the network.
//
// Connecting never blocks on a server that is down: the client keeps trying
// in the background (and reconnects after an outage, forever), so a
// publisher starts recording-side work at once and ships once NATS is up.
// Every call below that needs the server fails with FleetError(kTransport)
// while it is unreachable; callers retry with backoff.
//
// Ownership: owns the connection and the context (closed and destroyed
// with the NatsLink). Thread safety: libnats' connection and JetStream
// context may be used from several threads; ensureStream and the consumer
// calls are meant for one owner thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

struct __natsConnection;
struct __jsCtx;
struct jsPubAckErr;

namespace ledger::fleet {

struct NatsOptions {
  std::string urls;                      // "nats://host:4222[,nats://...]" (tls:// for TLS)
  std::string tokenFile;                 // a file holding the token the servers require, or empty
  std::string caFile;                    // PEM CA to verify the servers' TLS certificates, or empty
  std::string name;                      // the connection's name in the servers' monitoring
  std::int64_t requestTimeoutMs = 5000;  // JetStream API requests and publish acks
  // Set by the publisher: the most asynchronous publishes in flight, and
  // what to do when JetStream refuses one (called on libnats' thread with
  // the record's Ledger-Seq, 0 when unreadable, and the error).
  std::int64_t maxPendingPublishes = 4096;
  std::function<void(std::uint64_t seq, const std::string& error)> onPublishError;
};

// The stream the fleet's records go to: subjects ledger.*.records, file
// storage, kept until its limits (none by default) remove the oldest.
struct StreamSettings {
  std::string name = "LEDGER";
  int replicas = 1;
  // JetStream's window for dropping a repeated Nats-Msg-Id.
  std::int64_t duplicateWindowNs = 2LL * 60 * 1000 * 1000 * 1000;
};

class NatsLink {
 public:
  // Reads the token file, sets up TLS and starts connecting. Throws
  // FleetError(kConfig) for an unreadable token or CA file or bad URLs.
  explicit NatsLink(const NatsOptions& options);
  ~NatsLink();
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;

  bool connected() const;
  // The server the client talks to now ("" while disconnected).
  std::string connectedUrl() const;

  // Creates the stream when it does not exist; one that exists is used as
  // it is (its operator may have set limits). Throws kTransport.
  void ensureStream(const StreamSettings& stream);
  // The Ledger-Seq of the newest message the stream holds for `cluster`
  // (0 when it holds none). Throws kTransport.
  std::uint64_t lastShippedSeq(const std::string& stream, const std::string& cluster);

  __natsConnection* connection() const { return connection_; }
  __jsCtx* jetStream() const { return jetStream_; }

 private:
  static void publishErrorTrampoline(__jsCtx* js, ::jsPubAckErr* error, void* self);

  std::function<void(std::uint64_t, const std::string&)> onPublishError_;
  __natsConnection* connection_ = nullptr;
  __jsCtx* jetStream_ = nullptr;
};

// libnats' text for a status and, when it recorded one, the last error on
// this thread: for FleetError messages.
std::string natsErrorText(int status);

}  // namespace ledger::fleet
