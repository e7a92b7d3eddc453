#include "replay/kueue/held_record.h"

#include <algorithm>
#include <optional>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "ledger/format.h"
#include "replay/fold/replayer.h"
#include "schema/rollup.capnp.h"

namespace ledger::replay {

namespace {

// Quantities are stored as two 64-bit halves of their nano value.
__extension__ typedef unsigned __int128 UInt128;

// Change records read per scan: a window of the log's seqs.
constexpr std::uint64_t kLoadWindow = 8192;

std::string encode(const std::vector<std::pair<const HeldTarget*, const ResourceList*>>& levels,
                   std::uint64_t runStart) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::HeldLevels>();
  root.setRunStartSeq(runStart);
  auto list = root.initLevels(static_cast<unsigned>(levels.size()));
  unsigned i = 0;
  for (const auto& [target, held] : levels) {
    auto e = list[i++];
    e.setWorkload(target->workload);
    e.setKey(target->key);
    auto amounts = e.initHeld(static_cast<unsigned>(held->size()));
    unsigned j = 0;
    for (const auto& [resource, q] : *held) {
      auto a = amounts[j++];
      a.setResource(resource);
      const auto nanos = static_cast<UInt128>(q.nanos());
      a.setNanosHigh(static_cast<std::int64_t>(nanos >> 64));
      a.setNanosLow(static_cast<std::uint64_t>(nanos));
      a.setFormat(static_cast<std::uint8_t>(q.format()));
    }
  }
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

schema::HeldLevels::Reader rootOf(capnp::FlatArrayMessageReader& reader) {
  return reader.getRoot<schema::HeldLevels>();
}

ResourceList amountsOf(schema::HeldLevel::Reader level) {
  ResourceList out;
  for (auto a : level.getHeld()) {
    const auto nanos = (static_cast<UInt128>(static_cast<std::uint64_t>(a.getNanosHigh())) << 64) |
                       a.getNanosLow();
    if (a.getFormat() > static_cast<std::uint8_t>(Quantity::Format::kDecimalExponent))
      throw ReplayError("a stored held level names an unknown quantity format", true);
    out.emplace(a.getResource().cStr(),
                Quantity::fromNanos(static_cast<Int128>(nanos),
                                    static_cast<Quantity::Format>(a.getFormat())));
  }
  return out;
}

// Reads one stored value, turning a decoding failure into ReplayError.
template <typename F>
void decode(std::string_view key, kj::ArrayPtr<const capnp::word> words, F&& f) {
  try {
    capnp::FlatArrayMessageReader reader(words);
    f(rootOf(reader));
  } catch (const kj::Exception& e) {
    throw ReplayError("stored held levels at seq " + std::to_string(format::heldRecordSeq(key)) +
                          " do not decode: " + e.getDescription().cStr(),
                      true);
  }
}

}  // namespace

void HeldRecorder::snapshot(std::uint64_t seq, const HeldSource& held) {
  std::vector<HeldTarget> targets = held.holders();
  std::vector<std::pair<const HeldTarget*, const ResourceList*>> levels;
  for (const auto& t : targets) levels.emplace_back(&t, &held.heldBy(t));
  batch_[format::heldRecordKey(format::kHeldSnapshot, seq)] = encode(levels, 0);
  lastSeq_ = std::max(lastSeq_, seq);
}

void HeldRecorder::changes(std::uint64_t seq, const std::set<HeldTarget>& changed,
                           const HeldSource& held) {
  lastSeq_ = std::max(lastSeq_, seq);
  if (changed.empty()) return;
  std::vector<std::pair<const HeldTarget*, const ResourceList*>> levels;
  for (const auto& t : changed) levels.emplace_back(&t, &held.heldBy(t));
  batch_[format::heldRecordKey(format::kHeldChanges, seq)] = encode(levels, 0);
}

void HeldRecorder::runEnd(std::uint64_t runStart) {
  batch_[format::heldRecordKey(format::kHeldRunEnd, lastSeq_)] = encode({}, runStart);
}

namespace {

// Where the run reaching `seq` started: the run of the first pass end at or
// after it; none when no pass ended there.
std::optional<std::uint64_t> startOfRunReaching(const Ledger& ledger, std::uint64_t seq) {
  std::optional<std::uint64_t> runStart;
  Status st = ledger.scanUsageRollups(
      format::heldRecordKey(format::kHeldRunEnd, seq),
      format::heldRecordKey(format::kHeldRunEnd, UINT64_MAX), [&](std::string_view k, auto words) {
        decode(k, words, [&](schema::HeldLevels::Reader r) { runStart = r.getRunStartSeq(); });
        return false;
      });
  if (!st.isOk()) throw ReplayError(st);
  return runStart;
}

}  // namespace

std::uint64_t heldRunStart(const Ledger& ledger, std::uint64_t fromSeq) {
  const std::optional<std::uint64_t> runStart = startOfRunReaching(ledger, fromSeq);
  return runStart && *runStart <= fromSeq ? *runStart : fromSeq;
}

std::unique_ptr<StoredHeldLevels> StoredHeldLevels::open(const Ledger& ledger,
                                                         std::uint64_t fromSeq,
                                                         std::uint64_t toSeq) {
  const std::optional<std::uint64_t> runStart = startOfRunReaching(ledger, toSeq);
  if (!runStart || *runStart > fromSeq) return nullptr;
  std::string snapshotKey;
  Status st = ledger.usageRollupAtOrBefore(format::heldRecordKey(format::kHeldSnapshot, fromSeq),
                                           &snapshotKey);
  if (!st.isOk()) throw ReplayError(st);
  if (snapshotKey.empty() || format::heldRecordSeq(snapshotKey) < *runStart) return nullptr;
  std::unique_ptr<StoredHeldLevels> out(new StoredHeldLevels(ledger, toSeq));
  st =
      ledger.scanUsageRollups(snapshotKey, snapshotKey + '\0', [&](std::string_view k, auto words) {
        decode(k, words, [&](schema::HeldLevels::Reader r) {
          for (auto level : r.getLevels()) {
            out->held_.emplace(HeldTarget{level.getWorkload(), level.getKey().cStr()},
                               amountsOf(level));
          }
        });
        return false;
      });
  if (!st.isOk()) throw ReplayError(st);
  const std::uint64_t snapshotSeq = format::heldRecordSeq(snapshotKey);
  out->loadedUpTo_ = snapshotSeq + 1;
  for (std::uint64_t seq = snapshotSeq + 1; seq <= fromSeq;) {
    out->loadFrom(seq);
    for (auto it = out->ahead_.begin(); it != out->ahead_.end() && it->first <= fromSeq;
         it = out->ahead_.begin()) {
      out->advanceTo(it->first);
    }
    seq = out->loadedUpTo_;
  }
  out->changed_.clear();
  return out;
}

StoredHeldLevels::Window StoredHeldLevels::readWindow(const Ledger& ledger, std::uint64_t from,
                                                      std::uint64_t end) {
  Window out;
  out.end = end;
  Status st = ledger.scanUsageRollups(
      format::heldRecordKey(format::kHeldChanges, from),
      format::heldRecordKey(format::kHeldChanges, end), [&](std::string_view k, auto words) {
        decode(k, words, [&](schema::HeldLevels::Reader r) {
          Levels& levels = out.changes[format::heldRecordSeq(k)];
          for (auto level : r.getLevels()) {
            levels.emplace_back(HeldTarget{level.getWorkload(), level.getKey().cStr()},
                                amountsOf(level));
          }
        });
        return true;
      });
  if (!st.isOk()) throw ReplayError(st);
  return out;
}

void StoredHeldLevels::loadFrom(std::uint64_t seq) {
  if (seq < loadedUpTo_ || seq > toSeq_) return;
  auto endOf = [&](std::uint64_t from) { return std::min(toSeq_ + 1, from + kLoadWindow); };
  // Reading and decoding cost about as much as applying: the next window
  // is read on another thread meanwhile, as the records are
  // (replay/fold/scan_ahead.h).
  // (It starts at loadedUpTo_, at or before seq: records that change no
  // holding, ClusterQueues', ask for no seq.)
  const bool inNext = next_.valid() && seq < endOf(loadedUpTo_);
  if (next_.valid() && !inNext) next_.get();  // a window this jump skipped
  Window window = inNext ? next_.get() : readWindow(ledger_, seq, endOf(seq));
  ahead_.merge(window.changes);
  loadedUpTo_ = window.end;
  if (loadedUpTo_ <= toSeq_) {
    next_ = std::async(std::launch::async, &StoredHeldLevels::readWindow, std::cref(ledger_),
                       loadedUpTo_, endOf(loadedUpTo_));
  }
}

void StoredHeldLevels::advanceTo(std::uint64_t seq) {
  if (seq >= loadedUpTo_) loadFrom(seq);
  auto it = ahead_.find(seq);
  if (it == ahead_.end()) return;
  for (auto& [target, amounts] : it->second) {
    changed_.insert(target);
    if (amounts.empty()) {
      held_.erase(target);
    } else {
      held_[target] = std::move(amounts);
    }
  }
  ahead_.erase(it);
}

const ResourceList& StoredHeldLevels::heldBy(const HeldTarget& target) const {
  static const ResourceList kNone;
  auto it = held_.find(target);
  return it == held_.end() ? kNone : it->second;
}

std::set<HeldTarget> StoredHeldLevels::takeChanged() { return std::exchange(changed_, {}); }

std::vector<HeldTarget> StoredHeldLevels::holders() const {
  std::vector<HeldTarget> out;
  for (const auto& [target, list] : held_) out.push_back(target);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ledger::replay
