// The fleet consumer's refused messages: why a message was refused, and the
// count of each (cluster, reason) for ledger_fleet_refused_messages_total.
//
// A refused message is terminated on the stream (never redelivered) and
// nothing of it is committed; this only records that it happened. The
// cluster label is the message's cluster only when the fleet already knows
// that cluster (a copy or a trusted key), and "" otherwise, so a publisher
// inventing names cannot grow the metric without bound.
//
// Thread safety: note() from the consumer's thread, the readers from any.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace ledger::fleet {

enum class RefusalReason {
  kUndecodable,     // not a shipped record (headers, subject or payload)
  kBadClusterName,  // the subject's cluster is not a DNS label
  kBeyondWindow,    // a seq too far past the copy's head to hold
  kChain,           // does not chain onto the copy's previous record
  kDiffers,         // a seq the copy holds, with another record
  kNotCanonical,    // the copy would store other bytes (time backwards, encoding)
  kUnknownCluster,  // no trusted key names the cluster
  kSignature,       // a signature that does not verify with the cluster's keys
  kUnsigned,        // no signature covers the record, with keys required
};

// The label value in the metric, e.g. "undecodable".
const char* refusalReasonName(RefusalReason reason);

class RefusedMessages {
 public:
  // Logs the refusal with the message's stream sequence and counts it.
  void note(const std::string& clusterLabel, RefusalReason reason, std::uint64_t streamSeq,
            std::string_view detail);
  std::uint64_t total() const;
  // ledger_fleet_refused_messages_total in Prometheus' text format.
  std::string metricsText() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, RefusalReason>, std::uint64_t> counts_;
  std::uint64_t total_ = 0;
};

}  // namespace ledger::fleet
