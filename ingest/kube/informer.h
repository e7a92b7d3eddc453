// One resource's list+watch loop (client-go's reflector protocol), on its own
// thread, feeding the LedgerWriter.
//
//   discover  GET /apis/GROUP/VERSION (or /api/v1) for each preferred version
//             until one serves the resource; none: the resource is absent,
//             logged once and retried every `absentRetry`.
//   list      when there is no resourceVersion to resume from (first start,
//             or the old one expired): LIST with limit/continue paging; the
//             writer diffs it against the ledger (ADDED/MODIFIED/DELETED).
//   watch     GET ?watch=1&resourceVersion=RV&allowWatchBookmarks=true,
//             streamed line by line; every event and bookmark moves RV.
//   410 Gone  (HTTP status or an ERROR event), "too old resource version":
//             LIST again (counted as a relist), then watch from its RV.
//   failures  disconnects, stalls (no data for `idleTimeout`), 429 and 5xx,
//             401/403: reconnect after capped exponential backoff with
//             jitter, from the last resourceVersion received. 404: the API
//             went away; discover again.
//
// A restart resumes from the cursor the ledger committed (`resumeRv`).
//
// Ownership: borrows the writer and metrics (they outlive the informer); owns
// its KubeClient and thread. Thread safety: start() and stop() from the
// owner; stop() wakes the thread from any wait at once. Errors: nothing
// escapes the thread (every failure is retried, logged and counted); the
// constructor and start() may throw std::system_error.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "ingest/kube/backoff.h"
#include "ingest/kube/kube_client.h"
#include "ingest/kube/ledger_writer.h"
#include "ingest/kube/metrics.h"
#include "ingest/kube/resource_list.h"

namespace ledger::kube {

struct InformerOptions {
  std::size_t pageSize = 500;
  std::chrono::seconds watchTimeout{300};           // server-side timeoutSeconds: random in [T, 2T)
  std::chrono::milliseconds idleTimeout{660000};    // cut a watch that sends nothing this long
  std::chrono::milliseconds requestTimeout{60000};  // discovery and each LIST page
  std::chrono::milliseconds backoffInitial{500};
  std::chrono::milliseconds backoffMax{30000};
  std::chrono::milliseconds absentRetry{60000};
};

class Informer {
 public:
  Informer(ResourceSpec spec, const ClusterConfig& cluster, std::string resumeRv,
           LedgerWriter& writer, Metrics& metrics, InformerOptions options);
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void start();
  void stop();  // idempotent; joins the thread

  const std::string& id() const { return id_; }

 private:
  struct ApiError;
  void run();
  bool discover();
  void list();
  void watch();
  void push(WatchMessage m);
  bool wait(std::chrono::milliseconds d);  // false when stopping
  void retryAfter(const std::string& reason, const std::string& what);

  ResourceSpec spec_;
  std::string id_;
  KubeClient client_;
  LedgerWriter& writer_;
  Metrics& metrics_;
  InformerOptions options_;
  Backoff backoff_;

  std::shared_ptr<const ResolvedResource> resolved_;
  std::string rv_;        // where the next watch starts; empty: LIST first
  bool expired_ = false;  // the next LIST is a relist after 410
  bool announcedAbsent_ = false;
  bool synced_ = false;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ledger::kube
