// Posts Kubernetes Events (core v1, POST /api/v1/namespaces/{ns}/events)
// from a thread of its own, so that the caller (the --watch daemon's live
// state, which must never hold up a commit) only queues them.
//
// post() never blocks on the network: it appends to a bounded queue, and a
// full queue drops the event (counted as ledger_events_dropped_total and
// logged). The poster thread sends each event once it is at the queue's
// head: 201 counts as emitted; 409 AlreadyExists also counts as emitted (an
// Event's name is chosen by the caller, deterministically, so a 409 means
// this event was posted before, e.g. by the daemon before a restart). A 5xx,
// 429 or a transport error is retried with capped exponential backoff up to
// `maxAttempts`; any other 4xx is given up at once (403: the ServiceAccount
// lacks `create` on events), counted as failed and logged once per status
// code. Events still queued at stop() are abandoned (logged): the caller's
// deterministic names make a later re-post harmless.
//
// Ownership: owns its KubeClient and thread; borrows the Metrics, which must
// outlive the poster. Thread safety: post() from any thread; start()/stop()
// from one. Errors: the constructor throws ConfigError for unreadable
// credentials (KubeClient); nothing else throws except std::bad_alloc.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "ingest/kube/kube_client.h"
#include "ingest/kube/kube_config.h"
#include "ingest/kube/metrics.h"

namespace ledger::kube {

inline constexpr const char* kEventComponent = "kueue-dra-ledger";

// One Event about a namespaced object, posted in that object's namespace.
struct KubeEvent {
  std::string name;  // the Event's metadata.name
  std::string ns;
  // involvedObject
  std::string apiVersion;  // "kueue.x-k8s.io/v1beta2"
  std::string kind;
  std::string objectName;
  std::string uid;
  std::string type = "Warning";
  std::string reason;
  std::string message;
};

struct EventPosterOptions {
  std::size_t queueCapacity = 1024;
  int maxAttempts = 8;
  std::chrono::milliseconds backoffInitial{500};
  std::chrono::milliseconds backoffMax{30000};
  std::chrono::milliseconds requestTimeout{10000};
};

class EventPoster {
 public:
  EventPoster(ClusterConfig cluster, Metrics& metrics, EventPosterOptions options = {});
  ~EventPoster();
  EventPoster(const EventPoster&) = delete;
  EventPoster& operator=(const EventPoster&) = delete;

  void start();
  void stop();  // idempotent; interrupts a request or backoff in progress

  // Queues `event`; false when the queue was full and it was dropped.
  bool post(KubeEvent event);

 private:
  void run();
  // Sends one event until it ends (posted, conflict, refused, attempts
  // spent); false when stop() interrupted it.
  bool send(const KubeEvent& event);
  bool sleepUnlessStopped(std::chrono::milliseconds d);

  KubeClient client_;
  Metrics& metrics_;
  const EventPosterOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<KubeEvent> queue_;
  bool stopping_ = false;
  std::set<long> refusedStatuses_;  // 4xx codes logged already (poster thread only)
  std::thread thread_;
};

// The Event as the API server takes it (core v1), stamped `nowNs`.
std::string eventJson(const KubeEvent& event, std::int64_t nowNs);

}  // namespace ledger::kube
