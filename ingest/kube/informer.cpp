#include "ingest/kube/informer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <unordered_set>

#include "ingest/input_limits.h"
#include "ingest/json_numbers.h"
#include "ingest/kube/watch_decoder.h"
#include "ingest/watch_event.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::kube {

namespace {

using Json = nlohmann::json;

// The message of an API Status body, or the body itself (shortened).
std::string statusMessage(const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message")) return ingest::stringMember(j, "message");
  return body.substr(0, 200);
}

constexpr std::size_t kMaxLine = 64u << 20;

}  // namespace

struct Informer::ApiError {
  long status;
  std::string message;
};

Informer::Informer(ResourceSpec spec, const ClusterConfig& cluster, std::string resumeRv,
                   LedgerWriter& writer, Metrics& metrics, InformerOptions options)
    : spec_(std::move(spec)),
      id_(spec_.id()),
      client_(cluster),
      writer_(writer),
      metrics_(metrics),
      options_(options),
      backoff_(options.backoffInitial, options.backoffMax),
      rv_(std::move(resumeRv)) {
  metrics_.registerResource(id_);
}

Informer::~Informer() { stop(); }

void Informer::start() {
  thread_ = std::thread([this] { run(); });
}

void Informer::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  client_.interrupt();
  if (thread_.joinable()) thread_.join();
}

bool Informer::wait(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return stopping_; });
}

void Informer::push(WatchMessage m) {
  m.resource = resolved_;
  if (m.receivedNs == 0) m.receivedNs = nowNs();
  if (!writer_.push(std::move(m))) throw Interrupted();
}

void Informer::retryAfter(const std::string& reason, const std::string& what) {
  const auto delay = backoff_.next();
  spdlog::warn("{}: {}; retrying in {} ms", id_, what, delay.count());
  metrics_.watchRestart(id_, reason);
  wait(delay);
}

void Informer::run() {
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    try {
      if (!resolved_) {
        if (!discover()) {
          if (!announcedAbsent_) {
            std::string tried;
            for (const auto& v : spec_.versions) tried += (tried.empty() ? "" : ",") + v;
            spdlog::warn(
                "{}: not served by the API server (versions tried: {}); retrying every {} s", id_,
                tried.empty() ? "preferred" : tried,
                static_cast<double>(options_.absentRetry.count()) / 1000.0);
            announcedAbsent_ = true;
            // A snapshot waits for no LIST of it.
            auto absent = std::make_shared<ResolvedResource>();
            absent->id = id_;
            WatchMessage m;
            m.type = WatchMessage::Type::kAbsent;
            m.receivedNs = nowNs();
            m.resource = std::move(absent);
            if (!writer_.push(std::move(m))) throw Interrupted();
          }
          metrics_.setState(id_, ResourceState::kAbsent);
          wait(options_.absentRetry);
          continue;
        }
        announcedAbsent_ = false;
        if (!synced_) metrics_.setState(id_, ResourceState::kSyncing);
      }
      if (rv_.empty()) list();
      watch();
    } catch (const Interrupted&) {
      return;
    } catch (const StallError& e) {
      retryAfter("stall", e.what());
    } catch (const TransportError& e) {
      retryAfter("disconnect", e.what());
    } catch (const ApiError& e) {
      if (e.status == 404) {
        spdlog::warn("{}: the API answered 404 ({}); discovering it again", id_, e.message);
        resolved_.reset();
        metrics_.watchRestart(id_, "gone");
        continue;
      }
      retryAfter("error", "HTTP " + std::to_string(e.status) + ": " + e.message);
    } catch (const ConfigError& e) {
      retryAfter("error", e.what());
    } catch (const std::exception& e) {  // a malformed response, say: never fatal
      retryAfter("error", e.what());
    }
  }
}

bool Informer::discover() {
  std::vector<std::string> versions = spec_.versions;
  if (versions.empty()) {
    auto r = client_.get("/apis/" + spec_.group, options_.requestTimeout);
    if (r.status == 404) return false;
    if (r.status != 200) throw ApiError{r.status, statusMessage(r.body)};
    Json j = Json::parse(r.body, nullptr, false);
    if (j.is_object() && j.contains("preferredVersion")) {
      versions.push_back(ingest::stringMember(j["preferredVersion"], "version"));
    }
  }
  for (const std::string& v : versions) {
    auto r = client_.get(groupVersionPath(spec_.group, v), options_.requestTimeout);
    if (r.status == 404) continue;
    if (r.status != 200) throw ApiError{r.status, statusMessage(r.body)};
    Json j = Json::parse(r.body, nullptr, false);
    if (!j.is_object() || !j["resources"].is_array()) continue;
    for (const auto& res : j["resources"]) {
      if (ingest::stringMember(res, "name") != spec_.resource) continue;
      auto rr = std::make_shared<ResolvedResource>();
      rr->id = id_;
      rr->group = spec_.group;
      rr->version = v;
      rr->kind = ingest::stringMember(res, "kind").empty() ? spec_.kind
                                                           : ingest::stringMember(res, "kind");
      rr->namespace_ = spec_.namespace_;
      rr->name = spec_.name;
      resolved_ = std::move(rr);
      spdlog::info("{}: served as {}/{} {}", id_, spec_.group.empty() ? "core" : spec_.group, v,
                   resolved_->kind);
      return true;
    }
  }
  return false;
}

void Informer::list() {
  const ResolvedResource& r = *resolved_;
  if (expired_) metrics_.relist(id_);
  spdlog::info("{}: listing{}", id_,
               expired_ ? " again (the watch's resourceVersion expired)" : "");
  WatchMessage begin;
  begin.type = WatchMessage::Type::kListBegin;
  begin.expired = expired_;
  push(std::move(begin));
  auto listed = std::make_shared<std::unordered_set<std::string>>();
  std::string cont, listRv;
  const std::string selector = fieldSelectorQuery(spec_);
  do {
    std::string path =
        collectionPath(spec_, r.version) + "?limit=" + std::to_string(options_.pageSize);
    if (!cont.empty()) path += "&continue=" + urlEncode(cont);
    if (!selector.empty()) path += "&" + selector;
    auto resp = client_.get(path, options_.requestTimeout);
    if (resp.status == 410 && !cont.empty()) {
      spdlog::warn("{}: the LIST's continue token expired; listing from the start", id_);
      cont.clear();
      listed->clear();
      continue;
    }
    if (resp.status != 200) throw ApiError{resp.status, statusMessage(resp.body)};
    // Its items are recorded: an integer past 64 bits keeps its digits.
    Json page = ingest::parseJsonKeepingIntegers(resp.body, false);
    if (!page.is_object()) throw TransportError("LIST " + path + ": the response is not JSON");
    for (auto& item : page["items"]) {
      if (!item.is_object()) continue;
      // Parsing is iterative, but recording dumps the object recursively.
      if (ingest::nestedDeeperThan(item)) {
        spdlog::warn("{}: LIST item skipped: nested deeper than {} levels", id_,
                     ingest::kMaxNestingDepth);
        metrics_.watchRejected(id_);
        continue;
      }
      if (!item.contains("apiVersion")) item["apiVersion"] = r.apiVersion();
      if (!item.contains("kind")) item["kind"] = r.kind;
      if (std::string problem = ingest::objectProblem(item); !problem.empty()) {
        spdlog::warn("{}: LIST item skipped: {}", id_, problem);
        metrics_.watchRejected(id_);
        continue;
      }
      listed->insert(ingest::identityOf(item).objectKey());
      metrics_.watchEvent(id_, "LIST");
      WatchMessage m;
      m.type = WatchMessage::Type::kListItem;
      m.event.type = ingest::WatchEventType::kUpsert;
      m.event.object = std::move(item);
      push(std::move(m));
    }
    const Json& meta = page["metadata"];
    cont = ingest::stringMember(meta, "continue");
    listRv = ingest::stringMember(meta, "resourceVersion");
  } while (!cont.empty());
  WatchMessage end;
  end.type = WatchMessage::Type::kListEnd;
  end.resourceVersion = listRv;
  end.listed = std::move(listed);
  push(std::move(end));
  rv_ = listRv;
  expired_ = false;
  synced_ = true;  // the writer marks it synced once the LIST is committed
}

void Informer::watch() {
  const ResolvedResource& r = *resolved_;
  std::uniform_int_distribution<long> jitter(options_.watchTimeout.count(),
                                             2 * options_.watchTimeout.count() - 1);
  static thread_local std::mt19937 rng{std::random_device{}()};
  std::string path = collectionPath(spec_, r.version) +
                     "?watch=1&allowWatchBookmarks=true&resourceVersion=" + urlEncode(rv_) +
                     "&timeoutSeconds=" + std::to_string(std::max(1L, jitter(rng)));
  if (const std::string selector = fieldSelectorQuery(spec_); !selector.empty()) {
    path += "&" + selector;
  }
  spdlog::info("{}: watching from resourceVersion {}", id_, rv_);
  std::string buffer;
  const std::int64_t since = nowNs();
  bool expired = false;
  std::string errorText;
  std::size_t events = 0;
  auto onLine = [&](std::string_view line) -> bool {
    WatchLine decoded = decodeWatchLine(line, r.apiVersion(), r.kind);
    for (const auto& why : decoded.rejected) {
      spdlog::warn("{}: watch event skipped: {}", id_, why);
      metrics_.watchRejected(id_);
    }
    if (decoded.error) {
      expired = decoded.expired;
      errorText = std::move(decoded.errorText);
      return false;
    }
    for (auto& e : decoded.events) {
      const std::string rv = e.object.is_object() && e.object.contains("metadata")
                                 ? ingest::stringMember(e.object["metadata"], "resourceVersion")
                                 : std::string();
      ++events;
      metrics_.watchEvent(id_, decoded.type);
      WatchMessage m;
      m.type = WatchMessage::Type::kEvent;
      m.event = std::move(e);
      m.watchSinceNs = since;
      push(std::move(m));
      if (!rv.empty()) rv_ = rv;
    }
    return true;
  };
  auto onBody = [&](std::string_view data) -> bool {
    buffer.append(data);
    std::size_t start = 0;
    for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (!onLine(std::string_view(buffer).substr(start, nl - start))) return false;
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxLine) throw TransportError("a watch event is larger than 64 MiB");
    return true;
  };
  auto onHeaders = [&](long status) {
    if (status != 200) return;
    backoff_.reset();
    if (!synced_) {
      // Resumed from the ledger's cursor: the watch is live again.
      WatchMessage m;
      m.type = WatchMessage::Type::kSynced;
      push(std::move(m));
      synced_ = true;
    }
  };
  const auto started = std::chrono::steady_clock::now();
  HttpResponse resp = client_.stream(path, options_.idleTimeout, onBody, onHeaders);
  if (!buffer.empty() && !resp.stoppedByReader) onLine(buffer);
  if (resp.status == 410 || expired) {
    spdlog::warn("{}: resourceVersion {} is too old ({}); listing again", id_, rv_,
                 expired ? errorText : statusMessage(resp.body));
    metrics_.watchRestart(id_, "expired");
    rv_.clear();
    expired_ = true;
    return;
  }
  if (resp.status != 200) throw ApiError{resp.status, statusMessage(resp.body)};
  if (resp.stoppedByReader) {
    retryAfter("error", errorText);
    return;
  }
  // The server closed the watch (its timeout): watch again at once, unless
  // it keeps closing immediately with nothing to say.
  const bool shortLived = std::chrono::steady_clock::now() - started < std::chrono::seconds(1);
  if (shortLived && events == 0) {
    retryAfter("closed", "the watch ended at once");
  } else {
    spdlog::debug("{}: the server ended the watch after {} events", id_, events);
    metrics_.watchRestart(id_, "closed");
  }
}

}  // namespace ledger::kube
