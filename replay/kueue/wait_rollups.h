// The stored wait data beside the usage rollups: each whole hour's
// admissions with their waits, and the wait follower's state after some
// records, so `ledger-query waits` over a year reads a year of stored hours
// and replays only the records at its edges, and the --watch daemon starts
// from a stored state instead of the whole history.
//
// Keys in the usage_rollups family (ledger/format.h), schema/waits.capnp:
//   w<hour start>  a schema::WaitHour: the admissions of [start, start + 1h)
//                  in record order, every hour from the one of the ledger's
//                  first record to the last whole hour before its head
//                  (an hour with none stored empty, so a hole is damage);
//   v<seq>         a schema::WaitState: the follower (wait_follower.h) after
//                  the record at seq, every kWaitStateEvery seqs and after
//                  the last record of each writer pass's last whole hour.
// Every value names the first record its follower read (originSeq). A cut
// (ledger-replay archive) carries the follower's state to its seq
// (wait_store.h carryWaitState), so the values written before it stay
// usable and answer the whole history; a ledger cut by an earlier build,
// which carried none, starts at its cut, and the values written before it
// are not read.
//
// Written by writeUsageRollups' pass (usage_rollups.h), off the commit path.
// Derived data: dropping, damaging or an older version changes no answer;
// a reader that finds a value missing or undecodable answers from the log,
// and verifyWaitRollups proves each equals a fresh pass.
//
// Thread-compatible. Throws ReplayError when the ledger cannot be read or
// written.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ledger/ledger.h"
#include "replay/kueue/wait_follower.h"
#include "replay/kueue/workload_waits.h"

namespace ledger::replay {

inline constexpr std::uint32_t kWaitRollupVersion = 1;
inline constexpr std::uint64_t kWaitStateEvery = 16384;

// Writes the hours completed and the states reached since the last call;
// returns how many values. Needs a writable ledger of format 7 or later.
// `stateEvery`: the states' stride (tests store them more densely; verify
// is told the same).
std::uint64_t writeWaitRollups(Ledger& ledger, std::uint64_t stateEvery = kWaitStateEvery);

// The version of the stored wait data (the last hour's), nullopt when none
// is stored: writeUsageRollups drops the rollups when it is another.
std::optional<std::uint32_t> storedWaitVersion(const Ledger& ledger);

// [startNs, endNs) of the stored hours this ledger's readers use; nullopt
// when none are (none stored, another version, another origin).
struct WaitCoverage {
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
};
std::optional<WaitCoverage> waitRollupCoverage(const Ledger& ledger);

// `ledger-query waits`: workloadWaits' answer, from the stored hours the
// period covers and the records at its edges, each edge replayed from the
// nearest stored state before it. Answers from the log alone when nothing
// usable is stored, and when a stored value is missing or damaged (then
// *problem, when given, says which). Adds the stored hours read to
// *hoursRead when given.
WaitsReport waitsFromRollups(
    const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs, WaitGrouping by,
    std::uint64_t* hoursRead = nullptr, std::string* problem = nullptr,
    const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

// The daemon's start (tools/watch/admission_waits.h): restores `follower`
// from a stored state, hands every admission of the stored hours to
// `onStored`, and returns where the caller goes on: the seq after which the
// follower's state holds, and the time before which its admissions were
// already handed out. nullopt (follower untouched) when nothing usable is
// stored at or before `lastSeq`; throws ReplayError on a damaged value.
struct WaitResume {
  std::uint64_t seq = 0;
  std::int64_t handedBeforeNs = 0;
};
std::optional<WaitResume> resumeWaits(const Ledger& ledger, std::uint64_t lastSeq,
                                      WaitFollower& follower,
                                      const WaitFollower::OnSample& onStored);

struct WaitRollupVerification {
  std::uint64_t checked = 0;
  // Carried across a cut, checked only for being there: the follower's
  // state at the cut and the hours up to its time (their records are in
  // the archive).
  std::uint64_t carried = 0;
  // Written by an earlier build or before a cut: not checked, never read.
  bool notRead = false;
  std::string firstBad;  // e.g. "wait samples of hour 2026-11-20T08:00:00Z"; empty: all sound
  std::string problem;
};
// Follows the whole history again and compares every stored hour and state.
WaitRollupVerification verifyWaitRollups(const Ledger& ledger,
                                         std::uint64_t stateEvery = kWaitStateEvery);

}  // namespace ledger::replay
