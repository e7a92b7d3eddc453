#include "ingest/kube/ledger_writer.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <limits>
#include <vector>
#include "schema/k8s/rfc3339.h"
#include "schema/observation.h"

namespace ledger::kube {

namespace {

using SteadyClock = std::chrono::steady_clock;

// The source the Snapshot objects are recorded under.
constexpr const char* kSnapshotSource = "ledger:snapshot";

std::string rvOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

ingest::WatchEvent bookmark(const std::string& rv) {
  ingest::WatchEvent ev;
  ev.type = ingest::WatchEventType::kBookmark;
  ev.object = {{"metadata", {{"resourceVersion", rv}}}};
  return ev;
}

// Thrown out of a commit that waits for disk space when the writer is told
// to stop: the records it held are not committed.
struct GaveUp {
  Status lastError;
};

// Received events among `messages` from `from` on (bookmarks and LIST
// markers carry none).
std::size_t eventsIn(const std::deque<WatchMessage>& messages, std::size_t from) {
  std::size_t n = 0;
  for (std::size_t i = from; i < messages.size(); ++i) {
    const WatchMessage& m = messages[i];
    if (m.type == WatchMessage::Type::kListItem ||
        (m.type == WatchMessage::Type::kEvent &&
         m.event.type != ingest::WatchEventType::kBookmark)) {
      ++n;
    }
  }
  return n;
}

std::uint64_t directoryBytes(const std::string& dir) {
  std::error_code ec;
  std::uint64_t total = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec)) {
      const auto size = it->file_size(fec);
      if (!fec) total += size;
    }
  }
  return total;
}

}  // namespace

std::string ResolvedResource::livePrefix() const {
  std::string prefix = group + "/" + kind + "/";
  if (!namespace_.empty()) prefix += namespace_ + "/";
  return prefix;
}

bool ResolvedResource::covers(const std::string& objectKey) const {
  const std::string prefix = livePrefix();
  if (objectKey.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string rest = objectKey.substr(prefix.size());
  if (namespace_.empty() && !name.empty()) return rest.substr(rest.find('/') + 1) == name;
  return name.empty() || rest == name;
}

ingest::WatchEvent synthesizedDeletion(const ResolvedResource& resource,
                                       const std::string& objectKey, const LiveObject& live,
                                       const std::string& resourceVersion, const char* why) {
  // objectKey is group/kind/namespace/name.
  const auto a = objectKey.find('/');
  const auto b = objectKey.find('/', a + 1);
  const auto c = objectKey.find('/', b + 1);
  const std::string ns = objectKey.substr(b + 1, c - b - 1);
  const std::string name = objectKey.substr(c + 1);
  nlohmann::json meta = {{"name", name},
                         {"uid", live.uid},
                         {"resourceVersion", resourceVersion},
                         {"annotations", {{kSynthesizedAnnotation, why}}}};
  if (!ns.empty()) meta["namespace"] = ns;
  ingest::WatchEvent ev;
  ev.type = ingest::WatchEventType::kDeleted;
  ev.object = {{"apiVersion", resource.apiVersion()}, {"kind", resource.kind}, {"metadata", meta}};
  return ev;
}

LedgerWriter::LedgerWriter(Ledger& ledger, Metrics& metrics, WriterOptions options)
    : ledger_(ledger),
      metrics_(metrics),
      options_(options),
      // The writer commits at batchRecords itself (add()): a commit made
      // inside the Ingester's add could not wait for disk space between two
      // records of one message.
      ingester_(ledger, ingest::IngestOptions{std::numeric_limits<std::size_t>::max(), nullptr,
                                              [this](const AppendResult& r) { onCommit(r); },
                                              options.projection}),
      snapshot_(options_.snapshotWait),
      late_(options_.lateHold) {}

LedgerWriter::~LedgerWriter() { close(); }

void LedgerWriter::start() {
  if (ledger_.lastSeq() != 0) {
    Status st = ledger_.timeOf(ledger_.lastSeq(), &lastStampedNs_);
    if (!st.isOk()) throw ingest::LedgerError(st);
  }
  snapshot_.expect(options_.watched, SteadyClock::now());
  metrics_.committed(ledger_.lastSeq());
  updateStoredBytes(true);
  thread_ = std::thread([this] { run(); });
}

bool LedgerWriter::push(WatchMessage message) {
  std::unique_lock lock(mu_);
  auto refused = [&] { return closing_ || failed_ || (stopRequested_ && blocked_); };
  changed_.wait(lock, [&] { return refused() || queue_.size() < options_.queueCapacity; });
  if (refused()) return false;
  queue_.push_back(std::move(message));
  changed_.notify_all();
  return true;
}

void LedgerWriter::requestStop() {
  {
    std::lock_guard lock(mu_);
    stopRequested_ = true;
  }
  changed_.notify_all();
}

void LedgerWriter::close() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool LedgerWriter::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

Status LedgerWriter::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void LedgerWriter::run() {
  std::deque<WatchMessage> batch;
  try {
    for (;;) {
      {
        std::unique_lock lock(mu_);
        auto ready = [&] { return closing_ || !queue_.empty(); };
        if (const auto wake = wakeAt()) {
          changed_.wait_until(lock, *wake, ready);
        } else {
          changed_.wait(lock, ready);
        }
        if (queue_.empty() && closing_) break;
        batch.swap(queue_);
      }
      changed_.notify_all();  // room for producers
      // Each message leaves the batch once handled, so that a stop while
      // the disk is full can count the ones still waiting.
      for (; !batch.empty(); batch.pop_front()) handle(batch.front());
      tick(false);
      if (dirtySince_ && SteadyClock::now() >= *dirtySince_ + options_.flushInterval) flush();
    }
    // Stopping: what was held is recorded, the snapshot closed with what it
    // has, and every live watch was current until now.
    tick(true);
    const std::int64_t stoppedNs = nowNs();
    for (const auto& id : live_) markCurrent(*resources_[id], stoppedNs);
    flush();
  } catch (const GaveUp& g) {
    std::lock_guard lock(mu_);
    const std::size_t held =
        ingester_.pending() + eventsIn(batch, batch.empty() ? 0 : 1) + eventsIn(queue_, 0);
    const std::string what =
        "the disk is full: " + std::to_string(held) +
        " received event(s) were not committed when the daemon stopped; the watch cursors stay "
        "before them, so the next start receives them again (last error: " +
        g.lastError.message() + ")";
    spdlog::error("{}", what);
    failed_ = true;
    failure_ = Status::ioError(what);
  } catch (const ingest::LedgerError& e) {
    spdlog::error("ledger write failed: {}", e.what());
    std::lock_guard lock(mu_);
    failed_ = true;
    failure_ = e.status();
  } catch (const std::exception& e) {
    spdlog::error("ledger writer failed: {}", e.what());
    std::lock_guard lock(mu_);
    failed_ = true;
    failure_ = Status::ioError(e.what());
  }
  changed_.notify_all();
}

void LedgerWriter::add(const std::string& source, ingest::WatchEvent event,
                       std::int64_t receivedNs) {
  if (!dirtySince_) {
    dirtySince_ = SteadyClock::now();
    metrics_.setOldestUncommitted(receivedNs);
  }
  // Live events are stamped with the ingest clock as the writer records
  // them; a late event comes with its object's time. Either is raised to the
  // record before: the log's times never go backwards.
  if (event.type != ingest::WatchEventType::kBookmark) {
    const std::int64_t t = std::max(event.timeNs.value_or(nowNs()), lastStampedNs_);
    event.timeNs = t;
    lastStampedNs_ = t;
  }
  ingester_.add(source, std::move(event), ++positions_[source]);
  if (ingester_.pending() >= options_.batchRecords) flush();
}

std::optional<SteadyClock::time_point> LedgerWriter::wakeAt() const {
  std::optional<SteadyClock::time_point> wake;
  auto consider = [&](std::optional<SteadyClock::time_point> t) {
    if (t && (!wake || *t < *wake)) wake = t;
  };
  if (dirtySince_) consider(*dirtySince_ + options_.flushInterval);
  consider(late_.deadline());
  consider(snapshot_.deadline());
  return wake;
}

void LedgerWriter::handle(WatchMessage& m) {
  const auto now = SteadyClock::now();
  resources_.try_emplace(m.resource->id, m.resource);
  if (snapshot_.defers(m.resource->id, now)) {
    snapshot_.defer(std::move(m));
    return;
  }
  if (late_.holdIfLate(m, now)) {
    // Held late events count against the queue: a watch must not read on
    // while the disk is full.
    if (late_.size() >= options_.queueCapacity) drainLate();
    return;
  }
  // Everything else happened after the late events held.
  if (!late_.empty()) drainLate();
  dispatch(m);
  tick(false);
}

void LedgerWriter::drainLate() {
  for (auto& held : late_.take()) {
    WatchMessage& m = held.message;
    if (held.timeNs < m.receivedNs) {
      m.event.timeNs = held.timeNs;
      auto& meta = m.event.object["metadata"];
      if (meta.is_object()) {
        meta["annotations"][std::string(observation::kReceivedAnnotation)] =
            formatRfc3339(m.receivedNs);
      }
    }
    dispatch(m);
  }
}

void LedgerWriter::tick(bool force) {
  const auto now = SteadyClock::now();
  if (!late_.empty() && (force || now >= *late_.deadline())) drainLate();
  for (;;) {
    auto released = force ? snapshot_.releaseAll() : snapshot_.releasable(now);
    if (released.empty()) break;
    for (auto& m : released) {
      if (force || !late_.holdIfLate(m, now)) {
        if (!late_.empty() && !force) drainLate();
        dispatch(m);
      }
    }
  }
  if (force && !late_.empty()) drainLate();
  if (!snapshot_.open()) {
    snapshot_.expire(now);
    return;
  }
  if (!snapshot_.canClose(now, force)) return;
  flush();
  if (auto closed = snapshot_.closing(ledger_.lastSeq(), nowNs(), now, force)) {
    ingest::WatchEvent ev;
    ev.type = ingest::WatchEventType::kModified;
    ev.object = std::move(*closed);
    const auto& status = ev.object["status"];
    spdlog::info(
        "snapshot {}: seqs {}..{} complete{}", ev.object["metadata"]["name"].get<std::string>(),
        status["firstSeq"].get<std::uint64_t>(), status["lastSeq"].get<std::uint64_t>(),
        status["missing"].empty() ? std::string() : "; LISTs missing: " + status["missing"].dump());
    add(kSnapshotSource, std::move(ev), nowNs());
    flush();
  }
}

void LedgerWriter::markCurrent(const ResolvedResource& r, std::int64_t ns) {
  ingester_.advance(r.currentSource(), static_cast<std::uint64_t>(ns));
}

void LedgerWriter::dispatch(WatchMessage& m) {
  const ResolvedResource& r = *m.resource;
  switch (m.type) {
    case WatchMessage::Type::kEvent: {
      markCurrent(r, m.receivedNs);
      const std::string rv = rvOf(m.event.object);
      const bool isBookmark = m.event.type == ingest::WatchEventType::kBookmark;
      if (!isBookmark) metrics_.eventReceived(r.kind, m.receivedNs);
      const std::uint64_t dupsBefore = ingester_.stats().duplicates;
      add(r.watchSource(), std::move(m.event), m.receivedNs);
      // A duplicate still moves the watch cursor past it.
      if (ingester_.stats().duplicates != dupsBefore && !rv.empty()) {
        add(r.watchSource(), bookmark(rv), m.receivedNs);
      }
      break;
    }
    case WatchMessage::Type::kListBegin:
      listBegin(m);
      break;
    case WatchMessage::Type::kListItem:
      listItem(m);
      break;
    case WatchMessage::Type::kListEnd:
      listEnd(m);
      break;
    case WatchMessage::Type::kSynced:
      // Not yet proof the watch is current: a real API server answers an
      // expired resourceVersion with 200 and then an ERROR event (410).
      // Its first event or bookmark is.
      snapshot_.settled(r.id);
      live_.insert(r.id);
      flush();
      metrics_.setState(r.id, ResourceState::kSynced);
      break;
    case WatchMessage::Type::kAbsent:
      snapshot_.settled(r.id);
      break;
  }
}

void LedgerWriter::listBegin(const WatchMessage& m) {
  const ResolvedResource& r = *m.resource;
  flush();  // the LIST is compared with the committed live objects
  live_.erase(r.id);
  // A resource the ledger watched before lists again: it was not watched
  // from the last moment it was known current until now.
  Cursor watched;
  Status st = ledger_.cursor(r.watchSource(), &watched);
  if (!st.isOk() && !st.isNotFound()) throw ingest::LedgerError(st);
  const std::int64_t now = std::max(nowNs(), lastStampedNs_);
  if (auto added = snapshot_.begin(r.id, now, ledger_.lastSeq() + 1, SteadyClock::now())) {
    ingest::WatchEvent ev;
    ev.type = ingest::WatchEventType::kAdded;
    ev.object = std::move(*added);
    add(kSnapshotSource, std::move(ev), m.receivedNs);
    flush();
    snapshot_.setFirstSeq(ledger_.lastSeq());
  }
  if (!st.isOk() || watched.resourceVersion.empty()) return;
  Cursor current;
  st = ledger_.cursor(r.currentSource(), &current);
  if (!st.isOk() && !st.isNotFound()) throw ingest::LedgerError(st);
  std::int64_t from = st.isOk() ? static_cast<std::int64_t>(current.position) : 0;
  // A ledger of an earlier build knows no such moment: its last record.
  if (from <= 0 && ledger_.lastSeq() != 0) {
    Status t = ledger_.timeOf(ledger_.lastSeq(), &from);
    if (!t.isOk()) throw ingest::LedgerError(t);
  }
  from = std::min(from, now);
  const std::string reason =
      m.expired ? "the watch could not resume: its resourceVersion expired (410 Gone)"
                : "the watch had no resourceVersion to resume from";
  spdlog::warn("{}: not observed from {} to {} ({}); the relist records what changed", r.id,
               formatRfc3339(from), formatRfc3339(now), reason);
  snapshot_.noteGap(r.id, from, now, reason);
  metrics_.unobserved(r.id, now - from);
}

void LedgerWriter::listItem(WatchMessage& m) {
  const ResolvedResource& r = *m.resource;
  metrics_.eventReceived(r.kind, m.receivedNs);
  if (const auto since = snapshot_.gapFrom(r.id)) {
    auto& meta = m.event.object["metadata"];
    if (meta.is_object()) {
      meta["annotations"][std::string(observation::kUnobservedSinceAnnotation)] =
          formatRfc3339(*since);
    }
  }
  const ObjectIdentity id = ingest::identityOf(m.event.object);
  LiveObject live;
  Status st = ledger_.liveObject(id.objectKey(), &live);
  if (!st.isOk() && !st.isNotFound()) throw ingest::LedgerError(st);
  if (st.isOk() && !live.uid.empty() && live.uid != id.uid) {
    spdlog::info("{}: {} was replaced while the watch was down: recording DELETED uid {}", r.id,
                 id.objectKey(), live.uid);
    add(r.relistSource(),
        synthesizedDeletion(r, id.objectKey(), live, id.resourceVersion,
                            "replaced-while-unwatched"),
        m.receivedNs);
  }
  add(r.relistSource(), std::move(m.event), m.receivedNs);
}

void LedgerWriter::listEnd(const WatchMessage& m) {
  const ResolvedResource& r = *m.resource;
  flush();
  std::vector<std::pair<std::string, LiveObject>> gone;
  Status st = ledger_.scanLive(r.livePrefix(), [&](std::string_view key, const LiveObject& live) {
    std::string k(key);
    if (r.covers(k) && m.listed->count(k) == 0) gone.emplace_back(std::move(k), live);
  });
  if (!st.isOk()) throw ingest::LedgerError(st);
  for (const auto& [key, live] : gone) {
    spdlog::info("{}: {} is gone from the API: recording DELETED (uid {})", r.id, key, live.uid);
    add(r.relistSource(),
        synthesizedDeletion(r, key, live, m.resourceVersion, "deleted-while-unwatched"),
        m.receivedNs);
  }
  add(r.watchSource(), bookmark(m.resourceVersion), m.receivedNs);
  markCurrent(r, m.receivedNs);
  live_.insert(r.id);
  flush();
  snapshot_.ended(r.id, m.resourceVersion, m.listed->size(), gone.size());
  metrics_.setState(r.id, ResourceState::kSynced);
  spdlog::info("{}: synced at resourceVersion {} ({} objects listed, {} deleted while unwatched)",
               r.id, m.resourceVersion, m.listed->size(), gone.size());
}

void LedgerWriter::flush() {
  commit();
  dirtySince_.reset();
  metrics_.setOldestUncommitted(std::nullopt);
}

void LedgerWriter::commit() {
  struct Stall {
    SteadyClock::time_point since;
    std::size_t records = 0;
    std::uint64_t attempts = 0;
    std::chrono::milliseconds delay;
  };
  std::optional<Stall> stall;
  for (;;) {
    Status refused;
    try {
      ingester_.flush();
      break;
    } catch (const ingest::LedgerError& e) {
      if (!e.status().isNoSpace()) throw;
      refused = e.status();
    }
    // Until the error is cleared RocksDB refuses every write, so each
    // attempt clears it first; a disk still full fails that already.
    for (;;) {
      metrics_.writeFailed();
      if (!stall) {
        stall = Stall{SteadyClock::now(), ingester_.pending(), 0, options_.retryInitial};
        spdlog::error(
            "the disk is full: committing {} record(s) failed ({}); they and the events "
            "received after them are kept in memory (the watches pause once the queue is full) "
            "and the commit is retried, first in {} ms, then at most every {} ms; /readyz "
            "answers 503 until it succeeds",
            stall->records, refused.message(), options_.retryInitial.count(),
            options_.retryMax.count());
        setBlocked(true);
        metrics_.setWritesBlocked("the disk is full: " + std::to_string(stall->records) +
                                  " record(s) wait to be committed (" + refused.message() + ")");
      }
      ++stall->attempts;
      if (!waitBeforeRetry(stall->delay)) throw GaveUp{refused};
      stall->delay = std::min(stall->delay * 2, std::max(options_.retryMax, options_.retryInitial));
      refused = ledger_.resume();
      if (refused.isOk()) break;
      if (!refused.isNoSpace()) throw ingest::LedgerError(refused);
    }
  }
  if (stall) {
    const double waited = std::chrono::duration<double>(SteadyClock::now() - stall->since).count();
    spdlog::warn(
        "the disk has room again: committed the {} record(s) held for {:.1f} s after {} failed "
        "attempt(s); recording goes on",
        stall->records, waited, stall->attempts);
    setBlocked(false);
    metrics_.setWritesBlocked(std::nullopt);
  }
}

bool LedgerWriter::waitBeforeRetry(std::chrono::milliseconds delay) {
  std::unique_lock lock(mu_);
  return !changed_.wait_for(lock, delay, [&] { return closing_ || stopRequested_; });
}

void LedgerWriter::setBlocked(bool blocked) {
  {
    std::lock_guard lock(mu_);
    blocked_ = blocked;
  }
  // Producers waiting for room after a stop request are refused now.
  changed_.notify_all();
}

void LedgerWriter::onCommit(const AppendResult& result) {
  for (const auto& [kind, n] : ingester_.stats().recordedByKind) {
    auto& committed = committedByKind_[kind];
    if (n > committed) metrics_.recordsAppended(kind, n - committed);
    committed = n;
  }
  metrics_.committed(ledger_.lastSeq());
  // Everything pending went into this batch.
  dirtySince_.reset();
  metrics_.setOldestUncommitted(std::nullopt);
  updateStoredBytes(false);
  if (options_.afterCommit && result.firstSeq != 0) {
    try {
      options_.afterCommit(result.firstSeq, result.lastSeq);
    } catch (const std::exception& e) {
      spdlog::error("after commit {}..{}: {}", result.firstSeq, result.lastSeq, e.what());
    }
  }
}

void LedgerWriter::updateStoredBytes(bool force) {
  const auto now = SteadyClock::now();
  if (!force && now - lastSizeCheck_ < std::chrono::seconds(2)) return;
  lastSizeCheck_ = now;
  metrics_.setStoredBytes(directoryBytes(ledger_.directory()));
}

}  // namespace ledger::kube
