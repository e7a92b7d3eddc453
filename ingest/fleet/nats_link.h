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
#include <optional>
#include <string>

#include "ledger/sha256.h"

struct __natsConnection;
struct __natsMsg;
struct __jsCtx;
struct jsPubAck;
struct jsPubAckErr;

namespace ledger::fleet {

struct NatsOptions {
  std::string urls;                      // "nats://host:4222[,nats://...]" (tls:// for TLS)
  std::string tokenFile;                 // a file holding the token the servers require, or empty
  std::string userFile;                  // a file holding USER:PASSWORD (one line), or empty
  std::string caFile;                    // PEM CA to verify the servers' TLS certificates, or empty
  std::string name;                      // the connection's name in the servers' monitoring
  std::int64_t requestTimeoutMs = 5000;  // JetStream API requests and publish acks
  // Set by the publisher: the most asynchronous publishes in flight, and
  // what to do when JetStream refuses one (called on libnats' thread with
  // the record's Ledger-Seq, 0 when unreadable, and the error).
  std::int64_t maxPendingPublishes = 4096;
  std::function<void(std::uint64_t seq, const std::string& error)> onPublishError;
  // And when JetStream answers that it already holds a message under the
  // record's id (a duplicate): the record's Ledger-Seq and the stream
  // sequence of the message it holds, which may not be the record.
  std::function<void(std::uint64_t seq, std::uint64_t streamSeq)> onDuplicate;
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
  // The newest message the stream holds on `cluster`'s subject, as it
  // claims to be: its Ledger-Seq (0 when the header is not a number) and its Ledger-Chain-Hash
  // (nullopt when absent or not a hash). Anyone who may publish on the subject can have put it
  // there: the caller checks it. Throws kTransport.
  struct ShippedHead {
    bool present = false;  // the subject holds a message
    std::uint64_t seq = 0;
    std::optional<Digest> chainHash;
  };
  ShippedHead lastShipped(const std::string& stream, const std::string& cluster);
  // The Ledger-Chain-Hash and subject of the message at `streamSeq`, or
  // nullopt when there is none or it carries no hash. Throws kTransport.
  struct StoredMessage {
    std::string subject;
    std::optional<Digest> chainHash;
  };
  std::optional<StoredMessage> storedMessage(const std::string& stream, std::uint64_t streamSeq);

  __natsConnection* connection() const { return connection_; }
  __jsCtx* jetStream() const { return jetStream_; }

 private:
  static void publishAckTrampoline(__jsCtx* js, __natsMsg* msg, ::jsPubAck* ack,
                                   ::jsPubAckErr* error, void* self);

  std::function<void(std::uint64_t, const std::string&)> onPublishError_;
  std::function<void(std::uint64_t, std::uint64_t)> onDuplicate_;
  __natsConnection* connection_ = nullptr;
  __jsCtx* jetStream_ = nullptr;
};

// libnats' text for a status and, when it recorded one, the last error on
// this thread: for FleetError messages.
std::string natsErrorText(int status);

}  // namespace ledger::fleet
