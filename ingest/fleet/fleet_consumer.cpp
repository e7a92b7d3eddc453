#include "ingest/fleet/fleet_consumer.h"

#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <thread>

#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/shipped_record.h"
#include "ingest/ingester.h"

namespace ledger::fleet {

// The types FleetConsumer's own members hold: named (not in an anonymous
// namespace), since a member of a class with linkage may not have a type
// without it (GCC's -Wsubobject-linkage, when this file is compiled as
// part of a larger unit).
namespace consumer_types {

struct MsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
using OwnedMsg = std::unique_ptr<natsMsg, MsgDeleter>;

// A record waiting for the ones before it, with the message to acknowledge
// once it is applied.
struct Waiting {
  OwnedMsg msg;
  ShippedRecord shipped;
};

}  // namespace consumer_types

using consumer_types::OwnedMsg;
using consumer_types::Waiting;

namespace {

std::optional<std::string_view> headerOf(natsMsg* msg, const char* name) {
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, name, &value) != NATS_OK || value == nullptr) return std::nullopt;
  return std::string_view(value);
}

std::uint64_t streamSeqOf(natsMsg* msg, std::uint64_t* pending) {
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg) != NATS_OK) return 0;
  const std::uint64_t seq = meta->Sequence.Stream;
  if (pending != nullptr) *pending = meta->NumPending;
  jsMsgMetaData_Destroy(meta);
  return seq;
}

}  // namespace

struct FleetConsumer::ClusterCopy {
  std::string name;
  std::unique_ptr<Ledger> ledger;
  // Applied: committed, or in the batch being built (whose hashes follow).
  std::uint64_t appliedSeq = 0;
  Digest appliedHash{};
  std::vector<PendingRecord> pending;
  std::vector<Digest> pendingHashes;  // the shipped hash of each pending record
  std::uint64_t pendingFirst = 0;
  std::uint64_t lastStreamSeq = 0;
  std::map<std::uint64_t, Waiting> waiting;
  std::uint64_t recordsApplied = 0;
  std::atomic<std::uint64_t> committedSeq{0};
};

struct FleetConsumer::Batch {
  std::vector<OwnedMsg> toAck;
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
    if (entry.is_directory() && isClusterName(name) && mine) copyFor(name);
  }
  if (ec) throw FleetError("reading the fleet directory " + dir_, Status::ioError(ec.message()));
}

FleetConsumer::ClusterCopy& FleetConsumer::copyFor(const std::string& cluster) {
  auto it = copies_.find(cluster);
  if (it != copies_.end()) return *it->second;
  auto copy = std::make_unique<ClusterCopy>();
  copy->name = cluster;
  Ledger::Options lo;
  lo.sync = options_.sync;
  lo.maxWalBytes = kLiveMaxTotalWalBytes;
  const std::string path = (std::filesystem::path(dir_) / cluster).string();
  if (Status st = Ledger::open(path, lo, &copy->ledger); !st.isOk()) {
    throw FleetError("opening the fleet copy of cluster " + cluster + " (" + path + ")", st);
  }
  copy->appliedSeq = copy->ledger->lastSeq();
  copy->appliedHash = copy->ledger->lastHash();
  copy->committedSeq = copy->appliedSeq;
  std::lock_guard lock(mu_);
  return *copies_.emplace(cluster, std::move(copy)).first->second;
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
  config.MaxAckPending = static_cast<std::int64_t>(options_.maxWaiting + 4 * options_.batch);
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
  auto lastActivity = std::chrono::steady_clock::now();
  std::chrono::milliseconds backoff(250);
  std::string lastError;
  // A batch run gives up on NATS only after this many attempts in a row
  // failed, as well as the idle time: one JetStream request can take its
  // whole timeout (5 s) while a stream or consumer elects its leader after a
  // server restart, longer than a short --exit-when-idle.
  constexpr int kAttemptsBeforeGivingUp = 3;
  int failedAttempts = 0;
  auto givingUp = [&] {
    return exitWhenIdle && failedAttempts >= kAttemptsBeforeGivingUp &&
           std::chrono::steady_clock::now() - lastActivity > *exitWhenIdle;
  };
  while (!stop) {
    if (!subscription_) {
      try {
        subscribe();
        backoff = std::chrono::milliseconds(250);
        failedAttempts = 0;
      } catch (const FleetError& e) {
        if (e.kind() != FleetError::Kind::kTransport) throw;
        if (lastError != e.what()) spdlog::warn("fleet: {}; retrying", e.what());
        lastError = e.what();
        ++failedAttempts;
        if (givingUp()) throw FleetError(FleetError::Kind::kTransport, e.what());
        std::this_thread::sleep_for(backoff);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
        continue;
      }
    }
    natsMsgList list{};
    jsErrCode code = static_cast<jsErrCode>(0);
    const natsStatus s =
        natsSubscription_Fetch(&list, subscription_->sub, static_cast<int>(options_.batch),
                               options_.fetchWait.count(), &code);
    // An empty fetch is "caught up" only while connected: during an outage
    // fetches time out too, with the stream's records still unread.
    if ((s == NATS_TIMEOUT || (s == NATS_OK && list.Count == 0)) && link_->connected()) {
      natsMsgList_Destroy(&list);
      failedAttempts = 0;
      caughtUp_ = true;
      noteGaps();
      if (options_.onCaughtUp) options_.onCaughtUp();
      if (exitWhenIdle && std::chrono::steady_clock::now() - lastActivity >= *exitWhenIdle) return;
      continue;
    }
    if (s != NATS_OK || list.Count == 0) {
      natsMsgList_Destroy(&list);
      const std::string error = link_->connected() ? natsErrorText(s) : "not connected to NATS";
      if (lastError != error)
        spdlog::warn("fleet: fetching from {}: {}", options_.stream.name, error);
      lastError = error;
      // The consumer may be gone (deleted, or lost with a server's state):
      // subscribe again, which recreates it at its floor.
      if (code == JSConsumerNotFoundErr || s == NATS_NOT_FOUND) subscription_.reset();
      ++refetches_;
      // A batch run does not wait out an outage for ever either.
      ++failedAttempts;
      if (givingUp()) {
        throw FleetError(FleetError::Kind::kTransport,
                         "fetching from " + options_.stream.name + ": " + error);
      }
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
      continue;
    }
    failedAttempts = 0;
    lastError.clear();
    backoff = std::chrono::milliseconds(250);
    lastActivity = std::chrono::steady_clock::now();
    Batch batch;
    std::uint64_t pendingAfter = 1;
    // The messages are owned one by one from here, and the list's array is
    // freed at once: a refusal below throws out of the loop.
    std::vector<OwnedMsg> fetched;
    fetched.reserve(static_cast<std::size_t>(list.Count));
    for (int i = 0; i < list.Count; ++i) {
      fetched.emplace_back(list.Msgs[i]);
      list.Msgs[i] = nullptr;
    }
    natsMsgList_Destroy(&list);
    for (OwnedMsg& msg : fetched) {
      const std::uint64_t streamSeq = streamSeqOf(msg.get(), &pendingAfter);
      ShippedRecord shipped;
      std::string error;
      const char* data = natsMsg_GetData(msg.get());
      const std::string_view payload(data != nullptr ? data : "",
                                     static_cast<std::size_t>(natsMsg_GetDataLength(msg.get())));
      const char* subject = natsMsg_GetSubject(msg.get());
      if (!decodeShippedRecord(
              subject != nullptr ? subject : "",
              [&](const char* name) { return headerOf(msg.get(), name); }, payload, &shipped,
              &error)) {
        commit(batch);
        throw FleetError(
            FleetError::Kind::kRefused,
            "stream " + options_.stream.name + " message " + std::to_string(streamSeq) +
                (shipped.cluster.empty()
                     ? ""
                     : " (cluster " + shipped.cluster +
                           (shipped.seq ? ", seq " + std::to_string(shipped.seq) : "") + ")") +
                ": " + error + "; refused, the fleet's copies are unchanged");
      }
      ClusterCopy& copy = copyFor(shipped.cluster);
      copy.lastStreamSeq = std::max(copy.lastStreamSeq, streamSeq);
      if (shipped.seq > copy.appliedSeq + 1) {
        if (copy.waiting.size() >= options_.maxWaiting) {
          commit(batch);
          noteGaps();
          throw FleetError(FleetError::Kind::kGap,
                           "cluster " + copy.name + ": more than " +
                               std::to_string(options_.maxWaiting) + " records wait for seq " +
                               std::to_string(copy.appliedSeq + 1) + ", which the stream lacks");
        }
        Waiting w{std::move(msg), std::move(shipped)};
        w.shipped.bytes =
            std::string_view(natsMsg_GetData(w.msg.get()),
                             static_cast<std::size_t>(natsMsg_GetDataLength(w.msg.get())));
        const std::uint64_t seq = w.shipped.seq;
        copy.waiting.insert_or_assign(seq, std::move(w));
        continue;
      }
      Waiting w{std::move(msg), std::move(shipped)};
      auto applyOne = [&](Waiting& item) {
        ShippedRecord& r = item.shipped;
        if (r.seq <= copy.appliedSeq) {
          // A repeat: the same record, or a different one claiming a seq
          // that is taken (refused like an altered record).
          Digest stored{};
          bool found = false;
          if (r.seq >= copy.pendingFirst && copy.pendingFirst != 0 &&
              r.seq - copy.pendingFirst < copy.pendingHashes.size()) {
            stored = copy.pendingHashes[r.seq - copy.pendingFirst];
            found = true;
          } else {
            Status st = copy.ledger->scanLogBytes(
                r.seq, r.seq, [&](std::uint64_t, const Digest& h, std::string_view) {
                  stored = h;
                  found = true;
                  return false;
                });
            if (!st.isOk()) throw FleetError("reading cluster " + copy.name + "'s copy", st);
          }
          if (!found || stored != r.chainHash) {
            commit(batch);
            throw FleetError(FleetError::Kind::kRefused,
                             "cluster " + copy.name + " seq " + std::to_string(r.seq) +
                                 ": the record differs from the one the fleet's copy holds at "
                                 "that seq (chain hash " +
                                 toHex(r.chainHash) + ", held " + toHex(stored) +
                                 "): two publishers with one cluster name, or an altered "
                                 "record; refused");
          }
          batch.toAck.push_back(std::move(item.msg));
          return;
        }
        Sha256 hasher;
        const Digest expected = chainHash(copy.appliedHash, r.bytes, hasher);
        if (expected != r.chainHash) {
          commit(batch);
          throw FleetError(FleetError::Kind::kRefused,
                           "cluster " + copy.name + " seq " + std::to_string(r.seq) +
                               ": the chain hash shipped with the record (" + toHex(r.chainHash) +
                               ") is not the hash of the copy's previous record and this "
                               "record (" +
                               toHex(expected) +
                               "): altered on the way or from another ledger; refused, the "
                               "copy stays at seq " +
                               std::to_string(copy.appliedSeq));
        }
        if (copy.pending.empty()) copy.pendingFirst = r.seq;
        copy.pending.push_back(ingest::pendingRecordOf(std::move(r.record), options_.projection));
        copy.pendingHashes.push_back(r.chainHash);
        copy.appliedSeq = r.seq;
        copy.appliedHash = r.chainHash;
        batch.toAck.push_back(std::move(item.msg));
      };
      applyOne(w);
      while (!copy.waiting.empty() && copy.waiting.begin()->first <= copy.appliedSeq + 1) {
        auto node = copy.waiting.extract(copy.waiting.begin());
        applyOne(node.mapped());
      }
    }
    commit(batch);
    caughtUp_ = pendingAfter == 0;
    if (caughtUp_) {
      noteGaps();
      if (options_.onCaughtUp) options_.onCaughtUp();
    }
  }
}

void FleetConsumer::commit(Batch& batch) {
  for (auto& [name, copyPtr] : copies_) {
    ClusterCopy& copy = *copyPtr;
    if (copy.pending.empty()) continue;
    std::map<std::string, Cursor> cursors;
    Cursor c;
    c.position = copy.lastStreamSeq;
    cursors["nats:" + options_.stream.name] = c;
    AppendResult result;
    if (Status st = copy.ledger->append(copy.pending, cursors, &result); !st.isOk()) {
      throw FleetError("appending to cluster " + name + "'s copy", st);
    }
    // The copy's seqs and chain are the source's: the ledger assigned the
    // next seqs and hashed the same bytes again.
    if (result.firstSeq != copy.pendingFirst || copy.ledger->lastHash() != copy.appliedHash) {
      throw FleetError(FleetError::Kind::kRefused,
                       "cluster " + name + " seq " + std::to_string(copy.pendingFirst) + ".." +
                           std::to_string(copy.appliedSeq) +
                           ": the copy's chain differs from the source's after appending (a "
                           "record this build encodes differently)");
    }
    const std::uint64_t first = copy.pendingFirst;
    copy.recordsApplied += copy.pending.size();
    copy.pending.clear();
    copy.pendingHashes.clear();
    copy.pendingFirst = 0;
    copy.committedSeq = copy.appliedSeq;
    if (options_.afterCommit) options_.afterCommit(name, *copy.ledger, first, copy.appliedSeq);
  }
  // Only now: a message acknowledged is a record committed (or a repeat).
  for (auto& msg : batch.toAck) natsMsg_Ack(msg.get(), nullptr);
  batch.toAck.clear();
}

void FleetConsumer::noteGaps() {
  std::vector<FleetGap> now;
  for (const auto& [name, copy] : copies_) {
    if (copy->waiting.empty()) continue;
    now.push_back({name, copy->appliedSeq + 1, copy->waiting.begin()->first - 1});
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
  for (const auto& [name, copy] : copies_) out[name] = copy->committedSeq.load();
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
      "# HELP ledger_fleet_caught_up 1 when the last fetch left nothing pending.\n"
      "# TYPE ledger_fleet_caught_up gauge\n"
      "ledger_fleet_caught_up " +
      std::string(caughtUp_ ? "1" : "0") + "\n";
  return out;
}

}  // namespace ledger::fleet
