// One ledger that `ledger-query serve` answers from: the single ledger of
// `serve --ledger`, or one cluster's copy of `serve --fleet`. Holds what the
// request handlers read of it (serve_context.h): the open ledger and its
// catalog as of its newest commit, the folded states and answers kept
// between requests, and its newest verification.
//
// Follows a writer: refresh() opens the ledger again when its directory
// changed and it holds more records; a request keeps the snapshot it
// started with (current() hands out a shared pointer).
//
// Ownership: owns the open ledger and the caches. Thread safety: current(),
// states(), answers() and proof() from any thread; refresh() from one
// thread at a time (the server's follower). Errors: the constructor throws
// std::runtime_error when the ledger cannot be opened; refresh() throws
// what opening throws, leaving the current snapshot in place.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "ledger/ledger.h"
#include "tools/serve/answer_cache.h"
#include "tools/serve/objects_at.h"
#include "tools/serve/proof_watch.h"
#include "tools/serve/resource_catalog.h"

namespace ledger::serve {

class ServedLedger {
 public:
  struct Snapshot {
    std::shared_ptr<const Ledger> ledger;
    ResourceCatalog catalog;
  };

  explicit ServedLedger(std::string dir);
  ServedLedger(const ServedLedger&) = delete;
  ServedLedger& operator=(const ServedLedger&) = delete;

  const std::string& directory() const { return dir_; }
  std::shared_ptr<const Snapshot> current() const;
  void refresh();

  StateCache& states() { return *states_; }
  AnswerCache& answers() { return *answers_; }
  ProofState proof() { return proof_->current(); }

 private:
  // Answers about past moments: a few hundred lists, at most this much.
  static constexpr std::size_t kAnswerEntries = 512;
  static constexpr std::size_t kAnswerBytes = 256ULL << 20;

  std::string dir_;
  std::string seen_;  // the directory's signature at the last refresh()
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> snapshot_;
  std::unique_ptr<StateCache> states_;
  std::unique_ptr<AnswerCache> answers_;
  std::unique_ptr<ProofWatch> proof_;
};

}  // namespace ledger::serve
