// The held levels stored beside the usage rollups: what each holder held
// after the records that changed it, written by the rollups' writer from the
// records it integrates anyway (replay/kueue/usage_rollups.h), and read back
// by an integration over the log (replay/kueue/usage_levels.h) instead of
// following every Pod and ResourceClaim record, most of a cluster's records.
//
// Keys (ledger/format.h heldRecordKey), all derived data in the
// usage_rollups family:
//   x<seq>  the holders the record at seq changed (HeldSource::takeChanged
//           after it), each with what it holds after it;
//   y<seq>  every holder after the record at seq: at the start of each pass
//           of the writer and every kHeldSnapshotEvery records;
//   z<seq>  a pass ended after seq; its value names the first seq of the run
//           of passes that followed one another without a gap. A pass goes
//           on past the last whole hour to the ledger's last record, so the
//           next one starts inside a run and extends it; an earlier end it
//           passed stays, still true of the records it names.
// A period (fromSeq, toSeq] is served when one run holds a snapshot at or
// before fromSeq and reaches toSeq; otherwise the integration follows the
// records itself. Dropping them changes no answer, only its speed; verify
// compares them with what the records give (usage_rollups.h).
//
// HeldRecorder is single-threaded. A StoredHeldLevels is used by one thread
// and reads the next window of stored changes on a second one while that
// thread applies the current window (the Ledger's reads may run
// concurrently); destroying it waits for that read. It throws ReplayError
// when the ledger cannot be read or a stored value does not decode.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ledger/ledger.h"
#include "replay/kueue/held_source.h"

namespace ledger::replay {

inline constexpr std::uint64_t kHeldSnapshotEvery = 4096;

// Collects the records of one pass as key -> payload for
// Ledger::putUsageRollups.
class HeldRecorder {
 public:
  // Every holder of `held` after the record at `seq`.
  void snapshot(std::uint64_t seq, const HeldSource& held);
  // `changed` (from held.takeChanged()) after the record at `seq`; nothing
  // is stored when it is empty.
  void changes(std::uint64_t seq, const std::set<HeldTarget>& changed, const HeldSource& held);
  // The pass covered the records up to the last one given to snapshot() or
  // changes(), in a run that started at `runStart`.
  void runEnd(std::uint64_t runStart);
  // Also records every holder after the record at `seq` (verify asks for
  // the seqs a writer's passes started at).
  void alsoSnapshotAt(std::uint64_t seq) { extraSnapshots_.insert(seq); }
  // Whether snapshot() is due after the record at `seq`.
  bool wantsSnapshot(std::uint64_t seq) const {
    return seq % kHeldSnapshotEvery == 0 || extraSnapshots_.contains(seq);
  }
  // What was recorded since the last take.
  std::map<std::string, std::string> take() { return std::exchange(batch_, {}); }
  std::size_t pending() const { return batch_.size(); }

 private:
  std::map<std::string, std::string> batch_;
  std::set<std::uint64_t> extraSnapshots_;
  std::uint64_t lastSeq_ = 0;
};

// The first seq of the run a pass starting after `fromSeq` continues (a
// stored run reaches fromSeq from at or before it: the pass writes again
// what that run stored after fromSeq, the same), else fromSeq.
std::uint64_t heldRunStart(const Ledger& ledger, std::uint64_t fromSeq);

class StoredHeldLevels final : public HeldSource {
 public:
  // The holders after `fromSeq`, ready to follow the records up to toSeq;
  // nullptr when the stored levels do not cover (fromSeq, toSeq].
  static std::unique_ptr<StoredHeldLevels> open(const Ledger& ledger, std::uint64_t fromSeq,
                                                std::uint64_t toSeq);
  // Applies the changes stored for the record at `seq`, which follows the
  // last seq given (or fromSeq).
  void advanceTo(std::uint64_t seq);

  const ResourceList& heldBy(const HeldTarget& target) const override;
  std::set<HeldTarget> takeChanged() override;
  std::vector<HeldTarget> holders() const override;

 private:
  StoredHeldLevels(const Ledger& ledger, std::uint64_t toSeq) : ledger_(ledger), toSeq_(toSeq) {}
  using Levels = std::vector<std::pair<HeldTarget, ResourceList>>;
  // The change records of seqs [from, end), decoded.
  struct Window {
    std::map<std::uint64_t, Levels> changes;
    std::uint64_t end = 0;
  };
  static Window readWindow(const Ledger& ledger, std::uint64_t from, std::uint64_t end);
  void loadFrom(std::uint64_t seq);

  const Ledger& ledger_;
  std::uint64_t toSeq_;
  // Looked up for every change of a holding; holders() sorts.
  std::unordered_map<HeldTarget, ResourceList, HeldTargetHash> held_;
  std::set<HeldTarget> changed_;
  // Change records loaded ahead, by seq, and the first seq not loaded yet.
  std::map<std::uint64_t, Levels> ahead_;
  std::uint64_t loadedUpTo_ = 0;
  // The window after loadedUpTo_, being read (last: destroyed, and so
  // waited for, first).
  std::future<Window> next_;
};

}  // namespace ledger::replay
