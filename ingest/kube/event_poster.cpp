#include "ingest/kube/event_poster.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "ingest/kube/backoff.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::kube {

namespace {

bool retryable(long status) { return status >= 500 || status == 429; }

}  // namespace

std::string eventJson(const KubeEvent& e, std::int64_t nowNs) {
  // Whole seconds, as the API server writes metav1.Time.
  const std::string at = formatRfc3339Fixed(nowNs, 0);
  // Legacy core v1 fields (source, first/lastTimestamp, count) are what
  // `kubectl describe` shows; reportingComponent is reportingController's
  // wire name in core v1.
  const nlohmann::json body = {{"apiVersion", "v1"},
                               {"kind", "Event"},
                               {"metadata", {{"name", e.name}, {"namespace", e.ns}}},
                               {"involvedObject",
                                {{"apiVersion", e.apiVersion},
                                 {"kind", e.kind},
                                 {"namespace", e.ns},
                                 {"name", e.objectName},
                                 {"uid", e.uid}}},
                               {"type", e.type},
                               {"reason", e.reason},
                               {"message", e.message},
                               {"source", {{"component", kEventComponent}}},
                               {"reportingComponent", kEventComponent},
                               {"firstTimestamp", at},
                               {"lastTimestamp", at},
                               {"count", 1}};
  // A message is built from stored object names: never let one odd byte
  // lose the event.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

EventPoster::EventPoster(ClusterConfig cluster, Metrics& metrics, EventPosterOptions options)
    : client_(std::move(cluster)), metrics_(metrics), options_(options) {}

EventPoster::~EventPoster() { stop(); }

void EventPoster::start() {
  thread_ = std::thread([this] { run(); });
}

void EventPoster::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  client_.interrupt();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  if (!queue_.empty()) {
    spdlog::warn("events: {} event(s) not posted at stop", queue_.size());
    queue_.clear();
  }
}

bool EventPoster::post(KubeEvent event) {
  std::size_t dropped = 0;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    if (queue_.size() < options_.queueCapacity) {
      queue_.push_back(std::move(event));
      cv_.notify_one();
      return true;
    }
  }
  metrics_.eventDropped();
  dropped = metrics_.eventsDropped();
  // Logged at the first drop and then every hundredth: a flood of findings
  // must not also flood the log.
  if (dropped == 1 || dropped % 100 == 0) {
    spdlog::warn(
        "events: queue full ({} waiting), dropped the event for {} {}/{} ({} dropped so far)",
        options_.queueCapacity, event.kind, event.ns, event.objectName, dropped);
  }
  return false;
}

void EventPoster::run() {
  for (;;) {
    KubeEvent event;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      event = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!send(event)) return;
  }
}

bool EventPoster::sleepUnlessStopped(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return stopping_; });
}

bool EventPoster::send(const KubeEvent& e) {
  const std::string path = "/api/v1/namespaces/" + e.ns + "/events";
  const std::string what = e.reason + " on " + e.kind + " " + e.ns + "/" + e.objectName;
  Backoff backoff(options_.backoffInitial, options_.backoffMax);
  for (int attempt = 1;; ++attempt) {
    std::string failure;
    try {
      const HttpResponse r = client_.post(path, eventJson(e, nowNs()), options_.requestTimeout);
      if (r.status == 201 || r.status == 200) {
        metrics_.eventEmitted();
        spdlog::info("events: posted {} (Event {})", what, e.name);
        return true;
      }
      if (r.status == 409) {
        metrics_.eventEmitted();
        spdlog::debug("events: {} was posted before (Event {} exists)", what, e.name);
        return true;
      }
      if (!retryable(r.status)) {
        metrics_.eventFailed();
        if (refusedStatuses_.insert(r.status).second) {
          spdlog::error(
              "events: the API server refused to create Event {} ({}): HTTP {}{}: {}; not "
              "retried (further refusals with this status are counted in "
              "ledger_events_failed_total, not logged)",
              e.name, what, r.status,
              r.status == 403 ? " Forbidden: the ServiceAccount needs RBAC `create` on events "
                                "in the Workload's namespace (deploy/rbac-events.yaml)"
                              : "",
              r.body.substr(0, 512));
        }
        return true;
      }
      failure = "HTTP " + std::to_string(r.status);
    } catch (const Interrupted&) {
      return false;
    } catch (const TransportError& e2) {
      failure = e2.what();
    } catch (const ConfigError& e2) {  // an unreadable token file
      failure = e2.what();
    }
    if (attempt >= options_.maxAttempts) {
      metrics_.eventFailed();
      spdlog::error("events: giving up on {} after {} attempts: {}", what, attempt, failure);
      return true;
    }
    const auto wait = backoff.next();
    spdlog::warn("events: posting {} failed ({}); retrying in {} ms", what, failure, wait.count());
    if (!sleepUnlessStopped(wait)) return false;
  }
}

}  // namespace ledger::kube
