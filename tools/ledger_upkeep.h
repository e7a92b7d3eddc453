// The --watch daemon's upkeep of what it does not record itself: the
// checkpoints and usage rollups (derived data, replay/fold/checkpoints.h and
// replay/kueue/usage_rollups.h), so that a restart loads a checkpoint instead
// of folding the whole history, and a background check of the hash chain
// (ledger::verifyChain), so that /metrics says how recently the ledger was
// proven sound.
//
// Why a thread of its own and not the writer's: writing checkpoints folds the
// records since the newest one and a first pass over a ledger without any
// folds all of them; rollups integrate every hour not yet stored; a chain
// check reads every record since the last. On the writer thread each would
// delay the next commit by that much (and a first pass by the whole
// history). The Ledger lets putCheckpoint and putUsageRollups run beside
// its one appender (ledger/ledger.h), and the reads they need are of
// committed records, so here the writer only notes the committed seq
// (afterCommit: a lock and a notify) and commits are never delayed by the
// upkeep. It folds the records a second time (the live state folds them
// too); sharing that fold would tie checkpoints to the live state's pace.
//
// Checkpoints: once `checkpointEvery` records have been committed past the
// newest checkpoint, writeCheckpoints writes those due (incrementally, from
// the newest), then writeUsageRollups stores the hours completed since the
// last. The chain: checked at start() from the first record, then every
// `verifyEvery` from the last record checked; a break names the first bad
// seq in an error log line and sets ledger_verify_ok to 0. Each check's
// result is recorded beside the ledger (ledger/verification_record.h, scope
// "chain"), where every answer reads its proof line.
//
// Retention (--retain DURATION --archive-dir DIR): at start and after each
// round of checkpoints, the records older than now - DURATION, rounded down
// to a whole hour so that every hour before the cut stays whole in the
// rollups, are archived into DIR (tools/archive/archive_command.h,
// archiveBefore: the archive extended, then the cut in one write batch).
// Commits go on meanwhile: the archive copies committed records, and the
// cut removes only records before them. A failure is logged (error) and
// tried again at the next round; ledger_archive_last_seq and
// ledger_archive_last_time_seconds say where the ledger was last cut.
//
// Ownership: borrows the Ledger, which must outlive the upkeep (stop() or
// destroy it before closing the ledger).
// Thread safety: afterCommit() from the writer thread, metricsText() and the
// accessors from any; start()/stop() from the owner.
// Errors: failing to write checkpoints or rollups is logged (error) and
// tried again after another `checkpointEvery` records; it never stops the
// recording (derived data). A chain check that cannot read the ledger
// counts as failed; failing to record a check's result is logged (error).
// Nothing throws out of the thread; start() may throw
// std::system_error.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "ledger/ledger.h"
#include "ledger/verification_record.h"
#include "ledger/verify.h"
#include "tools/archive/archive_command.h"

namespace ledger::cli {

struct UpkeepOptions {
  std::uint64_t checkpointEvery = 2000;      // records; 0: no checkpoints or rollups
  std::chrono::milliseconds verifyEvery{0};  // 0: no chain checks
  // Records a chain check reads between looks at stop(): bounds how long a
  // stop waits for a check of a long history.
  std::uint64_t verifySlice = 100000;
  // --retain: keep this much history live, archiving the rest into
  // archive.to (0: never; needs checkpointEvery > 0).
  std::chrono::nanoseconds retain{0};
  ArchiveRequest archive{};  // `before` is set at each round
};

class LedgerUpkeep {
 public:
  LedgerUpkeep(Ledger& ledger, UpkeepOptions options);
  ~LedgerUpkeep();
  LedgerUpkeep(const LedgerUpkeep&) = delete;
  LedgerUpkeep& operator=(const LedgerUpkeep&) = delete;

  void start();
  // Waits for the checkpoint writing under way, if any. Idempotent.
  void stop();
  // The writer's hook: records up to `lastSeq` are committed.
  void afterCommit(std::uint64_t lastSeq);

  // ledger_checkpoint_seq, ledger_verify_ok, ledger_verified_seq,
  // ledger_last_verify_age_seconds (since the last check ended, or since
  // start() before the first ended), ledger_archive_last_seq and
  // ledger_archive_last_time_seconds (0: never cut). Empty families are
  // left out when their upkeep is off.
  std::string metricsText(std::int64_t nowNs) const;

  std::uint64_t checkpointSeq() const;  // the newest checkpoint's seq (0: none)
  std::uint64_t verifiedSeq() const;    // the last record the chain check found sound
  bool verifyOk() const;                // false once a check failed
  std::uint64_t verifications() const;  // checks completed
  std::uint64_t archivedSeq() const;    // the ledger's cut (0: none)

 private:
  void run();
  void writeDerived();  // mu_ not held
  void verify();        // mu_ not held
  void archiveOld();    // mu_ not held

  Ledger& ledger_;
  const UpkeepOptions options_;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::uint64_t committed_ = 0;
  std::uint64_t checkpointSeq_ = 0;
  // Checkpoints are due once checkpointEvery records pass this: the newest
  // checkpoint, or where a failed attempt was.
  std::uint64_t checkpointBase_ = 0;
  ChainPoint verified_;
  bool verifyOk_ = true;
  std::uint64_t verifications_ = 0;
  std::int64_t lastVerifyNs_ = 0;  // wall clock; start() before the first check
  bool archiveDue_ = false;
  std::uint64_t archivedSeq_ = 0;
  std::int64_t archivedTimeNs_ = 0;
};

}  // namespace ledger::cli
