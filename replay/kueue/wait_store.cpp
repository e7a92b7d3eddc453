#include "replay/kueue/wait_store.h"

#include <algorithm>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "ledger/format.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/usage_rollups.h"
#include "replay/kueue/wait_rollups.h"
#include "schema/k8s/rfc3339.h"
#include "schema/waits.capnp.h"

namespace ledger::replay {

namespace {

std::string flatBytes(capnp::MallocMessageBuilder& message) {
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

// Reads one stored value as `Root`, a decoding failure as corrupt.
template <typename Root, typename F>
void decodeWaitValue(std::string_view key, kj::ArrayPtr<const capnp::word> words, F&& f) {
  try {
    capnp::FlatArrayMessageReader reader(words);
    f(reader.getRoot<Root>());
  } catch (const kj::Exception& e) {
    throw ReplayError(
        "the stored " + describeWaitKey(key) + " does not decode: " + e.getDescription().cStr(),
        true);
  }
}

}  // namespace

std::string encodeWaitHour(const std::vector<WaitSample>& samples, std::uint64_t originSeq) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::WaitHour>();
  root.setVersion(kWaitRollupVersion);
  root.setOriginSeq(originSeq);
  auto list = root.initSamples(static_cast<unsigned>(samples.size()));
  unsigned i = 0;
  for (const auto& s : samples) {
    auto e = list[i++];
    e.setClusterQueue(s.clusterQueue);
    e.setNamespace(s.ns);
    e.setLocalQueue(s.localQueue);
    e.setWaitNs(s.waitNs);
  }
  return flatBytes(message);
}

std::string encodeWaitState(const WaitFollower& follower, std::uint64_t originSeq) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::WaitState>();
  root.setVersion(kWaitRollupVersion);
  root.setOriginSeq(originSeq);
  follower.save(root);
  return flatBytes(message);
}

std::uint64_t waitOrigin(const Ledger& ledger) {
  const std::uint64_t cut = ledger.firstSeq() - 1;
  if (cut == 0) return 1;
  std::uint64_t origin = ledger.firstSeq();
  const std::string key = format::waitStateKey(cut);
  Status st = ledger.scanUsageRollups(key, key + '\0', [&](std::string_view k, auto words) {
    // A damaged carried state carries nothing: verify names it.
    try {
      const WaitValueHeader header = waitValueHeader(k, words);
      if (header.version == kWaitRollupVersion) origin = header.originSeq;
    } catch (const ReplayError&) {
    }
    return false;
  });
  if (!st.isOk()) throw ReplayError(st);
  return origin;
}

bool WaitValueHeader::usable(std::uint64_t origin) const {
  return version == kWaitRollupVersion && originSeq == origin;
}

WaitValueHeader waitValueHeader(std::string_view key, kj::ArrayPtr<const capnp::word> payload) {
  WaitValueHeader out;
  // Both messages start with the version and the origin.
  if (key[0] == format::kWaitHour) {
    decodeWaitValue<schema::WaitHour>(key, payload, [&](schema::WaitHour::Reader r) {
      out = {r.getVersion(), r.getOriginSeq()};
    });
  } else {
    decodeWaitValue<schema::WaitState>(key, payload, [&](schema::WaitState::Reader r) {
      out = {r.getVersion(), r.getOriginSeq()};
    });
  }
  return out;
}

std::string describeWaitKey(std::string_view key) {
  if (key.size() == format::kUsageRollupKeySize && key[0] == format::kWaitHour)
    return "wait samples of hour " + formatRfc3339(format::usageRollupStart(key));
  return "wait state after seq " + std::to_string(format::heldRecordSeq(key));
}

std::uint64_t restoreWaitState(const Ledger& ledger, std::uint64_t seq, WaitFollower& follower) {
  // The states before the cut went with it (Ledger::cutArchived), but the
  // one it carried.
  const std::uint64_t none = ledger.firstSeq() - 1;
  seq = std::max(seq, none);
  if (seq == 0) return none;
  std::string key;
  if (Status st = ledger.usageRollupAtOrBefore(format::waitStateKey(seq), &key); !st.isOk())
    throw ReplayError(st);
  if (key.empty() || format::heldRecordSeq(key) < none) return none;
  const std::uint64_t origin = waitOrigin(ledger);
  std::uint64_t restored = none;
  Status st = ledger.scanUsageRollups(key, key + '\0', [&](std::string_view k, auto words) {
    decodeWaitValue<schema::WaitState>(k, words, [&](schema::WaitState::Reader r) {
      if (!WaitValueHeader{r.getVersion(), r.getOriginSeq()}.usable(origin)) return;
      follower.restore(r);
      restored = format::heldRecordSeq(k);
    });
    return false;
  });
  if (!st.isOk()) throw ReplayError(st);
  return restored;
}

void carryWaitState(Ledger& ledger, std::uint64_t seq) {
  WaitFollower follower(WaitGrouping::kClusterQueue);
  const std::uint64_t from = restoreWaitState(ledger, seq, follower);
  if (from < seq) {
    Status st = ledger.scanProjections(from + 1, seq,
                                       [&](std::uint64_t, schema::ProjectedRecord::Reader r) {
                                         follower.follow(r, [](const WaitSample&) {});
                                         return true;
                                       });
    if (!st.isOk()) throw ReplayError(st);
  }
  const std::string value = encodeWaitState(follower, waitOrigin(ledger));
  if (Status st = ledger.putUsageRollups({{format::waitStateKey(seq), value}}); !st.isOk())
    throw ReplayError(st);
}

void forEachStoredWaitHour(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                           const WaitFollower::OnSample& onSample, std::uint64_t* hoursRead) {
  std::int64_t expected = fromNs;
  const std::uint64_t origin = waitOrigin(ledger);
  WaitSample sample;
  Status st = ledger.scanUsageRollups(
      format::waitHourKey(fromNs), format::waitHourKey(toNs),
      [&](std::string_view key, auto words) {
        if (format::usageRollupStart(key) != expected)
          throw ReplayError(
              "the stored " + describeWaitKey(format::waitHourKey(expected)) + " is missing", true);
        decodeWaitValue<schema::WaitHour>(key, words, [&](schema::WaitHour::Reader r) {
          if (!WaitValueHeader{r.getVersion(), r.getOriginSeq()}.usable(origin))
            throw ReplayError("the stored " + describeWaitKey(key) + " is of another version",
                              true);
          sample.atNs = expected;
          for (auto s : r.getSamples()) {
            sample.clusterQueue = s.getClusterQueue().cStr();
            sample.ns = s.getNamespace().cStr();
            sample.localQueue = s.getLocalQueue().cStr();
            sample.waitNs = s.getWaitNs();
            onSample(sample);
          }
        });
        expected += kHourNs;
        if (hoursRead != nullptr) ++*hoursRead;
        return true;
      });
  if (!st.isOk()) throw ReplayError(st);
  if (expected < toNs)
    throw ReplayError(
        "the stored " + describeWaitKey(format::waitHourKey(expected)) + " is missing", true);
}

WaitHourKeys storedWaitHourKeys(const Ledger& ledger) {
  WaitHourKeys out;
  if (Status st = ledger.lastUsageRollup(format::kWaitHour, &out.last); !st.isOk())
    throw ReplayError(st);
  if (out.last.empty()) return out;
  Status st = ledger.scanUsageRollups(format::waitHourKey(INT64_MIN), out.last + '\0',
                                      [&](std::string_view key, auto) {
                                        out.first = std::string(key);
                                        return false;
                                      });
  if (!st.isOk()) throw ReplayError(st);
  return out;
}

}  // namespace ledger::replay
