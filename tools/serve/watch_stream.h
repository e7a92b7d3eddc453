// A watch's recorded changes (ApiResponse::watch, kube_api.h): the records
// after the moment that touch the watched resource, in seq order, as watch
// event lines; at the ledger's end it waits for new commits of a live
// writer, so a watch at a past moment plays history forward and then
// follows the present.
//
// Borrows nothing past a call: `ledger` is asked for the current ledger on
// each poll. Errors: a ledger that cannot be read ends the stream with an
// ERROR event (a v1 Status), as the API server ends a broken watch.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "ledger/ledger.h"
#include "tools/serve/api_request.h"

namespace ledger::serve {

class WatchStream {
 public:
  WatchStream(WatchPlan plan, std::function<std::shared_ptr<const Ledger>()> ledger);

  // Writes the next events (at most a batch of records' worth) with
  // `write`; false when the stream is over (timeout, error, or `write`
  // failed because the client went). Sleeps up to `idleMs` when there is
  // nothing new.
  bool next(const std::function<bool(std::string_view)>& write, int idleMs = 200);

 private:
  WatchPlan plan_;
  std::function<std::shared_ptr<const Ledger>()> ledger_;
  std::uint64_t nextSeq_;
  bool headersSent_;
  std::int64_t deadlineNs_ = 0;
};

}  // namespace ledger::serve
