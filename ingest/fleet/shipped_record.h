// One ledger record as it travels through NATS JetStream: the wire format
// shared by the publisher and the fleet consumer (docs/reference.md,
// "The fleet").
//
//   subject   ledger.<cluster>.records
//   headers   Nats-Msg-Id        <cluster>:<seq>  (JetStream drops a repeat
//                                 inside the stream's duplicate window), or
//                                 <cluster>:<seq>:<chain hash> when another
//                                 message took that id (publisher.h)
//             Ledger-Cluster     <cluster>
//             Ledger-Seq         the record's seq in its cluster's ledger
//             Ledger-Time        the record's time, ns since the epoch
//             Ledger-Chain-Hash  hash(seq) in 64 hex digits (ledger/format.h)
//             Ledger-Signature   optional: the cluster's Ed25519 signature of
//                                this seq and hash, base64 (head_signature.h)
//   payload   the LogRecord bytes exactly as the source hashed them
//
// A cluster name is a DNS label (lowercase letters, digits, '-', at most 63),
// so it is one subject token and one directory name.
//
// decodeShippedRecord reads bytes from the network: it never throws on them
// and checks everything before the consumer trusts a field. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "ingest/fleet/head_signature.h"
#include "ledger/record.h"
#include "ledger/sha256.h"

namespace ledger::fleet {

inline constexpr const char* kDefaultStream = "LEDGER";
inline constexpr const char* kHeaderMsgId = "Nats-Msg-Id";
inline constexpr const char* kHeaderCluster = "Ledger-Cluster";
inline constexpr const char* kHeaderSeq = "Ledger-Seq";
inline constexpr const char* kHeaderTime = "Ledger-Time";
inline constexpr const char* kHeaderChainHash = "Ledger-Chain-Hash";

bool isClusterName(std::string_view name);
// Throws FleetError(kConfig) naming `flag` unless isClusterName(name).
void checkClusterName(std::string_view name, const char* flag);

// "ledger.<cluster>.records", and the stream's subjects "ledger.*.records".
std::string recordSubject(std::string_view cluster);
inline constexpr const char* kStreamSubjects = "ledger.*.records";
std::string messageId(std::string_view cluster, std::uint64_t seq);
// "<cluster>:<seq>:<chain hash in hex>": the id a publisher falls back to
// when another message took its record's plain id.
std::string hashedMessageId(std::string_view cluster, std::uint64_t seq, const Digest& hash);
// The token between "ledger." and ".records" in a subject of that form,
// whether or not it is a cluster name; nullopt for any other subject.
std::optional<std::string_view> subjectClusterToken(std::string_view subject);

// A message's headers as the decoder asks for them: the value, or nullopt
// when the header is absent.
using HeaderLookup = std::function<std::optional<std::string_view>(const char* name)>;

struct ShippedRecord {
  std::string cluster;
  std::uint64_t seq = 0;
  std::int64_t timeNs = 0;
  Digest chainHash{};
  std::optional<Signature> signature;  // read, not verified
  Record record;                       // the payload, decoded
  std::string_view bytes;              // the payload, as hashed (points into the message)
};

// Checks and decodes one message: the subject names a cluster, the headers
// agree with the subject and with the payload's own seq and time, the hash
// is 64 hex digits and the payload is a LogRecord. On failure returns false
// with `error` saying what is wrong (and out->cluster/seq set when they
// were readable, for the message that names them).
bool decodeShippedRecord(std::string_view subject, const HeaderLookup& header,
                         std::string_view payload, ShippedRecord* out, std::string* error);

}  // namespace ledger::fleet
