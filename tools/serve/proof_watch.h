// The ledger's newest verification (ledger/verification_record.h) as
// ledger-serve states it on every answer: a `Ledger-Proof` header with the
// proof line, a Warning header (299) while the newest verification failed,
// and the members "verifiedAt", "verifiedUpTo", "verifyOk" and "verifiedBy"
// (tools/render/proof_format.h states the same for the CLI) in
// /ledger/v1/range; the other /ledger/v1/ answers carry them from the query
// commands.
//
// The record is read again whenever its file changes (a stat per answer):
// a verification made while the server runs is stated by the next answer,
// and never kept in the answer cache with an answer about a past moment.
//
// Thread-safe. Errors: a record that cannot be read is stated as that (the
// header names the error; the members are null), never thrown.
#pragma once

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ledger/verification_record.h"

namespace ledger::serve {

struct ProofState {
  std::optional<Verification> proof;
  std::string error;  // why the record could not be read ("" when it could)

  // The Ledger-Proof header's value: "verified up to seq N at T by
  // ledger-replay verify: ok", "checked up to seq N at T by ...: FAILED at
  // seq N: why", "never verified";
  // printable ASCII without quotes (other bytes as '?').
  std::string line() const;
  // The Warning header's value while the newest verification failed or its
  // record is unreadable; "" otherwise.
  std::string warning() const;
  // Adds the members to a JSON object.
  void addTo(nlohmann::json& object) const;
};

class ProofWatch {
 public:
  explicit ProofWatch(std::string ledgerDir) : dir_(std::move(ledgerDir)) {}
  ProofState current();

 private:
  std::string dir_;
  std::mutex mu_;
  bool read_ = false;
  std::string signature_;  // the file's inode, size and modification time
  ProofState state_;
};

}  // namespace ledger::serve
