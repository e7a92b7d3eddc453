// The fleet's one error type (ingest/fleet: publishing a ledger to NATS
// JetStream and keeping the fleet's copies).
//
// FleetError names what failed and how a program should end (a message the
// consumer refuses is no error: it is counted and the run goes on,
// refused_messages.h):
//   kTransport  NATS could not be reached or refused a request for good
//               (a publisher retries before it gets here; exit 4)
//   kLedger     a ledger refused a read or write: status() (exitCodeFor)
//   kGap        records missing from the stream, reported with their
//               range; everything present was applied (exit 2)
//   kConfig     bad options (a cluster name that is not a DNS label; exit 1)
// Plain value; thread-safe to copy.
#pragma once

#include <stdexcept>
#include <string>

#include "ledger/status.h"

namespace ledger::fleet {

class FleetError : public std::runtime_error {
 public:
  enum class Kind { kTransport, kLedger, kGap, kConfig };

  FleetError(Kind kind, const std::string& what)
      : std::runtime_error(what), kind_(kind), status_(Status::ok()) {}
  // A ledger's refusal, with the context it happened in.
  FleetError(const std::string& context, const Status& status)
      : std::runtime_error(context + ": " + status.toString()),
        kind_(Kind::kLedger),
        status_(status) {}

  Kind kind() const { return kind_; }
  const Status& status() const { return status_; }

 private:
  Kind kind_;
  Status status_;
};

}  // namespace ledger::fleet
