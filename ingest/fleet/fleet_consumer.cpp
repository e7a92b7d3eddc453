#include "ingest/fleet/fleet_consumer.h"

#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <thread>

#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/shipped_record.h"

namespace ledger::fleet {

// What run() carries from one round to the next.
struct FleetConsumer::RunState {
  std::chrono::steady_clock::time_point lastActivity = std::chrono::steady_clock::now();
  std::chrono::milliseconds backoff{250};
  std::string lastError;
  int failedAttempts = 0;
};

struct FleetConsumer::Subscription {
  natsSubscription* sub = nullptr;
  ~Subscription() {
    if (sub != nullptr) natsSubscription_Destroy(sub);
  }
};

FleetConsumer::FleetConsumer(std::string dir, FleetConsumerOptions options)
    : dir_(std::move(dir)), options_(std::move(options)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    throw FleetError("creating the fleet directory " + dir_, Status::ioError(ec.message()));
  }
  openExisting();
  NatsOptions nats = options_.nats;
  if (nats.name.empty()) nats.name = "ledger-fleet " + options_.durable;
  link_ = std::make_unique<NatsLink>(nats);
}

FleetConsumer::~FleetConsumer() = default;

void FleetConsumer::openExisting() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    // Another consumer's copies (a sharded fleet) are that consumer's to hold.
    const bool mine =
        options_.filterSubject == kStreamSubjects || options_.filterSubject == recordSubject(name);
    if (entry.is_directory() && isClusterName(name) && mine) {
      copyFor(name).adopt(openLedger(name));
    }
  }
  if (ec) throw FleetError("reading the fleet directory " + dir_, Status::ioError(ec.message()));
}

ClusterCopy& FleetConsumer::copyFor(const std::string& cluster) {
  auto it = copies_.find(cluster);
  if (it != copies_.end()) return *it->second;
  auto copy = std::make_unique<ClusterCopy>();
  copy->name = cluster;
  std::lock_guard lock(mu_);
  return *copies_.emplace(cluster, std::move(copy)).first->second;
}

std::unique_ptr<Ledger> FleetConsumer::openLedger(const std::string& cluster) {
  Ledger::Options lo;
  lo.sync = options_.sync;
  lo.maxWalBytes = kLiveMaxTotalWalBytes;
  const std::string path = (std::filesystem::path(dir_) / cluster).string();
  std::unique_ptr<Ledger> ledger;
  if (Status st = Ledger::open(path, lo, &ledger); !st.isOk()) {
    throw FleetError("opening the fleet copy of cluster " + cluster + " (" + path + ")", st);
  }
  return ledger;
}

void FleetConsumer::forgetStrangers() {
  std::lock_guard lock(mu_);
  std::erase_if(copies_, [](const auto& entry) {
    const ClusterCopy& c = *entry.second;
    return !c.open && c.held.empty() && c.pending.empty();
  });
}

void FleetConsumer::subscribe() {
  subscription_.reset();
  link_->ensureStream(options_.stream);
  jsCtx* js = link_->jetStream();
  const char* stream = options_.stream.name.c_str();
  const char* durable = options_.durable.c_str();
  // Start again at the acknowledgement floor: everything at or below it was
  // committed (acknowledged only after its commit), everything after it
  // comes again now instead of after the acknowledgement wait.
  std::uint64_t floor = 0;
  bool existed = false;
  jsConsumerInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetConsumerInfo(&info, js, stream, durable, nullptr, &code);
  if (s == NATS_OK) {
    floor = info->AckFloor.Stream;
    // A consumer created at a start sequence that has acknowledged nothing
    // since reports a floor of 0 (nats-server 2.9): its floor is still the
    // sequence before its start, or every restart would alternate between
    // reading from there and from the stream's beginning.
    if (info->Config != nullptr && info->Config->DeliverPolicy == js_DeliverByStartSequence &&
        info->Config->OptStartSeq > 0) {
      floor = std::max<std::uint64_t>(floor, info->Config->OptStartSeq - 1);
    }
    existed = true;
    jsConsumerInfo_Destroy(info);
    s = js_DeleteConsumer(js, stream, durable, nullptr, &code);
    if (s != NATS_OK && code != JSConsumerNotFoundErr) {
      throw FleetError(FleetError::Kind::kTransport,
                       "recreating consumer " + options_.durable + ": " + natsErrorText(s));
    }
  } else if (code != JSConsumerNotFoundErr && s != NATS_NOT_FOUND) {
    throw FleetError(FleetError::Kind::kTransport,
                     "looking up consumer " + options_.durable + ": " + natsErrorText(s));
  }
  jsConsumerConfig config;
  jsConsumerConfig_Init(&config);
  config.Durable = durable;
  config.AckPolicy = js_AckExplicit;
  config.AckWait = 60LL * 1000 * 1000 * 1000;
  config.MaxDeliver = -1;
  config.MaxAckPending = static_cast<std::int64_t>(options_.maxHeld + 4 * options_.batch);
  config.FilterSubject = options_.filterSubject.c_str();
  if (floor > 0) {
    config.DeliverPolicy = js_DeliverByStartSequence;
    config.OptStartSeq = floor + 1;
  } else {
    config.DeliverPolicy = js_DeliverAll;
  }
  s = js_AddConsumer(&info, js, stream, &config, nullptr, &code);
  if (s != NATS_OK) {
    throw FleetError(FleetError::Kind::kTransport,
                     "creating consumer " + options_.durable + ": " + natsErrorText(s));
  }
  jsConsumerInfo_Destroy(info);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream;
  so.Consumer = durable;
  auto sub = std::make_unique<Subscription>();
  s = js_PullSubscribe(&sub->sub, js, options_.filterSubject.c_str(), durable, nullptr, &so, &code);
  if (s != NATS_OK) {
    throw FleetError(FleetError::Kind::kTransport,
                     "subscribing as " + options_.durable + ": " + natsErrorText(s));
  }
  subscription_ = std::move(sub);
  spdlog::info("fleet: reading stream {} as consumer {}{}", options_.stream.name, options_.durable,
               existed ? " from stream seq " + std::to_string(floor + 1) : " from its start");
}

void FleetConsumer::run(const std::atomic<bool>& stop,
                        std::optional<std::chrono::milliseconds> exitWhenIdle) {
  RunState state;
  while (!stop && step(state, exitWhenIdle)) {
  }
}

bool FleetConsumer::step(RunState& st, std::optional<std::chrono::milliseconds> exitWhenIdle) {
  // A batch run gives up on NATS only after this many attempts in a row
  // failed, as well as the idle time: one JetStream request can take its
  // whole timeout (5 s) while a stream or consumer elects its leader after a
  // server restart, longer than a short --exit-when-idle.
  constexpr int kAttemptsBeforeGivingUp = 3;
  auto failed = [&](const std::string& error, const std::string& context) {
    if (st.lastError != error) spdlog::warn("fleet: {}{}; retrying", context, error);
    st.lastError = error;
    ++st.failedAttempts;
    if (exitWhenIdle && st.failedAttempts >= kAttemptsBeforeGivingUp &&
        std::chrono::steady_clock::now() - st.lastActivity > *exitWhenIdle) {
      throw FleetError(FleetError::Kind::kTransport, context + error);
    }
    std::this_thread::sleep_for(st.backoff);
    st.backoff = std::min(st.backoff * 2, std::chrono::milliseconds(5000));
  };
  if (!subscription_) {
    try {
      subscribe();
      st.backoff = std::chrono::milliseconds(250);
      st.failedAttempts = 0;
    } catch (const FleetError& e) {
      if (e.kind() != FleetError::Kind::kTransport) throw;
      failed(e.what(), "");
      return true;
    }
  }
  natsMsgList list{};
  jsErrCode code = static_cast<jsErrCode>(0);
  const auto fetchStarted = std::chrono::steady_clock::now();
  const natsStatus s =
      natsSubscription_Fetch(&list, subscription_->sub, static_cast<int>(options_.batch),
                             options_.fetchWait.count(), &code);
  // A fetch that returns long after its wait ran out did not run meanwhile
  // (the process was stopped, SIGSTOP, or starved): that time was not spent
  // waiting for records, and what the stream delivered to the pull made
  // before is still to be read. It does not count towards --exit-when-idle.
  if (std::chrono::steady_clock::now() - fetchStarted >
      options_.fetchWait + std::chrono::milliseconds(1000)) {
    st.lastActivity = std::chrono::steady_clock::now();
  }
  // An empty fetch is not "caught up": a fetch also times out during an
  // outage, after the process was stopped, or when the durable is gone.
  // The stream's count of what it has not delivered decides.
  if ((s == NATS_TIMEOUT || (s == NATS_OK && list.Count == 0)) && link_->connected()) {
    natsMsgList_Destroy(&list);
    std::optional<std::uint64_t> undelivered;
    try {
      undelivered = undeliveredCount();
    } catch (const FleetError& e) {
      if (e.kind() != FleetError::Kind::kTransport) throw;
      failed(e.what(), "");
      return true;
    }
    if (!undelivered) {
      lostDurable("is gone");
      return true;
    }
    st.failedAttempts = 0;
    setCaughtUp(*undelivered == 0);
    if (*undelivered > 0) return true;
    return !(exitWhenIdle && std::chrono::steady_clock::now() - st.lastActivity >= *exitWhenIdle);
  }
  if (s != NATS_OK || list.Count == 0) {
    natsMsgList_Destroy(&list);
    // The consumer may be gone (deleted, or lost with a server's state):
    // subscribe again, which recreates it at its floor.
    if (code == JSConsumerNotFoundErr || s == NATS_NOT_FOUND) lostDurable("is not found");
    ++refetches_;
    failed(link_->connected() ? natsErrorText(s) : "not connected to NATS",
           "fetching from " + options_.stream.name + ": ");
    return true;
  }
  st.failedAttempts = 0;
  st.lastError.clear();
  st.backoff = std::chrono::milliseconds(250);
  st.lastActivity = std::chrono::steady_clock::now();
  // The messages are owned one by one from here, and the list's array is
  // freed at once: a ledger's failure below throws out of the loop.
  std::vector<OwnedMsg> fetched;
  fetched.reserve(static_cast<std::size_t>(list.Count));
  for (int i = 0; i < list.Count; ++i) {
    fetched.emplace_back(list.Msgs[i]);
    list.Msgs[i] = nullptr;
  }
  natsMsgList_Destroy(&list);
  Batch batch;
  for (OwnedMsg& msg : fetched) take(std::move(msg), batch);
  commit(batch);
  forgetStrangers();
  setCaughtUp(batch.pendingAfter == 0);
  return true;
}

void FleetConsumer::lostDurable(const std::string& why) {
  subscription_.reset();
  setCaughtUp(false);
  if (options_.onGone) options_.onGone();
  // Logged once readiness has dropped: whoever reads this line (a test, an
  // operator) finds /readyz already 503.
  spdlog::warn("fleet: consumer {} or stream {} {}; creating it again", options_.durable,
               options_.stream.name, why);
}

void FleetConsumer::setCaughtUp(bool caughtUp) {
  caughtUp_ = caughtUp;
  if (caughtUp) {
    noteGaps();
    if (options_.onCaughtUp) options_.onCaughtUp();
  }
}

std::optional<std::uint64_t> FleetConsumer::undeliveredCount() {
  jsConsumerInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  const natsStatus s = js_GetConsumerInfo(&info, link_->jetStream(), options_.stream.name.c_str(),
                                          options_.durable.c_str(), nullptr, &code);
  if (s == NATS_OK) {
    const std::uint64_t pending = info->NumPending;
    jsConsumerInfo_Destroy(info);
    return pending;
  }
  if (code == JSConsumerNotFoundErr || code == JSStreamNotFoundErr || s == NATS_NOT_FOUND) {
    return std::nullopt;
  }
  throw FleetError(FleetError::Kind::kTransport,
                   "looking up consumer " + options_.durable + ": " + natsErrorText(s));
}

void FleetConsumer::commit(Batch& batch) {
  for (auto& [name, copy] : copies_) {
    if (!copy->pending.empty()) commitCopy(*copy);
  }
  // Only now: a message acknowledged is a record committed (or a repeat).
  for (auto& msg : batch.toAck) natsMsg_Ack(msg.get(), nullptr);
  batch.toAck.clear();
}

void FleetConsumer::commitCopy(ClusterCopy& copy) {
  const std::size_t count = vouchedPending(copy);
  if (count == 0) return;
  if (!copy.ledger) {
    // A new cluster's first commit: its records chain from an empty ledger,
    // which this creates; the applied head stays the pending records'.
    copy.ledger = openLedger(copy.name);
    copy.open = true;
  }
  std::map<std::string, Cursor> cursors;
  Cursor position;
  position.position = copy.lastStreamSeq;
  cursors["nats:" + options_.stream.name] = position;
  if (options_.trustedKeys) {
    // The head's signature, kept with the copy for `verify --trusted-keys`.
    Cursor head;
    head.position = copy.appliedSeq;
    head.resourceVersion = signatureText(*copy.pendingMsgs[count - 1].signature);
    cursors[kHeadSignatureCursor] = head;
  }
  const std::uint64_t first = copy.pendingFirst;
  const std::vector<PendingRecord> records = copy.takePending(count);
  AppendResult result;
  if (Status st = copy.ledger->append(records, cursors, &result); !st.isOk()) {
    throw FleetError("appending to cluster " + copy.name + "'s copy", st);
  }
  // checkNext() made sure of it before; a difference here is this
  // program's fault, and the consumer stops rather than go on from it.
  if (result.firstSeq != first || copy.ledger->lastHash() != copy.appliedHash) {
    throw FleetError("cluster " + copy.name + " seq " + std::to_string(first) + ".." +
                         std::to_string(copy.appliedSeq),
                     Status::corruption("the copy's chain differs from the source's after "
                                        "appending records that were checked"));
  }
  for (PendingMessage& m : copy.pendingMsgs) natsMsg_Ack(m.msg.get(), nullptr);
  copy.pendingMsgs.clear();
  copy.recordsApplied += records.size();
  copy.committedSeq = copy.appliedSeq;
  if (options_.afterCommit) options_.afterCommit(copy.name, *copy.ledger, first, copy.appliedSeq);
}

void FleetConsumer::noteGaps() {
  std::vector<FleetGap> now;
  for (const auto& [name, copy] : copies_) {
    if (copy->held.empty()) continue;
    now.push_back({name, copy->appliedSeq + 1, copy->held.begin()->first - 1});
  }
  std::lock_guard lock(mu_);
  for (const FleetGap& g : now) {
    bool known = false;
    for (const FleetGap& old : gaps_) {
      known = known || (old.cluster == g.cluster && old.first == g.first && old.last == g.last);
    }
    if (!known) {
      spdlog::error(
          "fleet: cluster {}: records {}..{} are missing from stream {} (expired before the "
          "fleet read them?); later records wait. Publish them again on that cluster: "
          "ledger-replay publish --from-seq {}",
          g.cluster, g.first, g.last, options_.stream.name, g.first);
    }
  }
  gaps_ = std::move(now);
}

std::vector<FleetGap> FleetConsumer::gaps() const {
  std::lock_guard lock(mu_);
  return gaps_;
}

std::map<std::string, std::uint64_t> FleetConsumer::clusters() const {
  std::lock_guard lock(mu_);
  std::map<std::string, std::uint64_t> out;
  for (const auto& [name, copy] : copies_) {
    if (copy->open) out[name] = copy->committedSeq.load();
  }
  return out;
}

std::string FleetConsumer::metricsText(std::int64_t) const {
  std::string out;
  out +=
      "# HELP ledger_fleet_seq Last seq committed to a cluster's fleet copy.\n"
      "# TYPE ledger_fleet_seq gauge\n";
  const auto seqs = clusters();
  for (const auto& [name, seq] : seqs) {
    out += "ledger_fleet_seq{cluster=\"" + name + "\"} " + std::to_string(seq) + "\n";
  }
  out +=
      "# HELP ledger_fleet_gap_records Records a cluster's copy lacks though later ones "
      "arrived.\n# TYPE ledger_fleet_gap_records gauge\n";
  for (const auto& [name, seq] : seqs) {
    std::uint64_t missing = 0;
    for (const FleetGap& g : gaps()) {
      if (g.cluster == name) missing += g.last - g.first + 1;
    }
    out += "ledger_fleet_gap_records{cluster=\"" + name + "\"} " + std::to_string(missing) + "\n";
  }
  out +=
      "# HELP ledger_fleet_caught_up 1 when the stream had nothing left for the consumer at "
      "the last look.\n"
      "# TYPE ledger_fleet_caught_up gauge\n"
      "ledger_fleet_caught_up " +
      std::string(caughtUp_ ? "1" : "0") + "\n";
  out += refused_.metricsText();
  return out;
}

}  // namespace ledger::fleet
