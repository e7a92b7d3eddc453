#include "ingest/fleet/refused_messages.h"

#include <spdlog/spdlog.h>

namespace ledger::fleet {

const char* refusalReasonName(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::kUndecodable:
      return "undecodable";
    case RefusalReason::kBadClusterName:
      return "bad-cluster-name";
    case RefusalReason::kBeyondWindow:
      return "beyond-window";
    case RefusalReason::kChain:
      return "chain";
    case RefusalReason::kDiffers:
      return "differs";
    case RefusalReason::kNotCanonical:
      return "not-canonical";
    case RefusalReason::kUnknownCluster:
      return "unknown-cluster";
    case RefusalReason::kSignature:
      return "signature";
    case RefusalReason::kUnsigned:
      return "unsigned";
  }
  return "unknown";
}

void RefusedMessages::note(const std::string& clusterLabel, RefusalReason reason,
                           std::uint64_t streamSeq, std::string_view detail) {
  spdlog::error("fleet: refused stream message {} ({}{}): {}; terminated, nothing committed",
                streamSeq, refusalReasonName(reason),
                clusterLabel.empty() ? std::string() : ", cluster " + clusterLabel, detail);
  std::lock_guard lock(mu_);
  ++counts_[{clusterLabel, reason}];
  ++total_;
}

std::uint64_t RefusedMessages::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

std::string RefusedMessages::metricsText() const {
  std::string out =
      "# HELP ledger_fleet_refused_messages_total Messages refused and terminated on the "
      "stream, by cluster (\"\" when the fleet does not know it) and reason.\n"
      "# TYPE ledger_fleet_refused_messages_total counter\n";
  std::lock_guard lock(mu_);
  for (const auto& [key, count] : counts_) {
    out += "ledger_fleet_refused_messages_total{cluster=\"" + key.first + "\",reason=\"" +
           refusalReasonName(key.second) + "\"} " + std::to_string(count) + "\n";
  }
  return out;
}

}  // namespace ledger::fleet
