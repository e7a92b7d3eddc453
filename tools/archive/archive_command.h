// `ledger-replay archive --before TIME --to DIR`: the cut (contract
// "Retention"). Moves the records before TIME into a sealed archive in DIR
// (ledger/archive.h) and cuts them from the live ledger (Ledger::cutArchived),
// which keeps the chain's link, a checkpoint at the cut and every usage
// rollup.
//
// Order (what a kill -9 leaves, docs/design.md "Archives"): the live
// ledger's rollups are brought up to date; the archive is written and
// sealed (the live ledger only read); the checkpoint at the cut is folded;
// then ONE synced write batch makes the cut; then the checkpoints after the
// cut are written again. Killed before the batch, the live ledger is as it
// was; a rerun with the same --before and --to finds the sealed archive,
// checks its seal against the live ledger's hash at its seq and makes the
// cut without copying again (an unsealed DIR is refused, naming it). After
// the batch, the ledger is cut; a rerun with the same --before has nothing
// to archive (exit 0, saying so).
//
// A cut ledger archives again into the same DIR only (another is refused,
// naming it): a later --before extends the sealed archive with the records
// from the cut to it (extendArchive: sealed beside, swapped in by one
// rename) and moves the cut on; a --before whose records are archived
// already is a no-op. Killed after the extended archive's swap, before the
// batch, the archive reaches past the live ledger's cut: it still holds the
// link (the live ledger's hash at the cut, and the live ledger's own hash at
// the archive's seal), so --archive and verify --archive hold, and a rerun
// makes the cut.
//
// Test hook: LEDGER_TEST_KILL_ARCHIVE=after-archive (after the seal, before
// the batch) or =after-cut (after the batch) kills the process with SIGKILL
// there, as a crash would.
//
// On a terminal each stage shows its bar (tools/progress.h): the live
// ledger's rollups, the copy, the archive's checkpoints and rollups, the
// fold to the cut, the checkpoints after it; none with `quiet`.
//
// Throws cli::UsageError for a TIME or DIR it refuses (exit 1) and
// ReplayError for a ledger it cannot read or write; returns the exit code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "ingest/projector.h"
#include "ledger/ledger.h"

namespace ledger::cli {

struct ArchiveRequest {
  std::string before;  // a TIME (tools/time_flags.h)
  std::string to;      // the archive's directory
  ingest::ProjectionOptions projection;
  std::uint64_t checkpointEvery = 0;
  bool quiet = false;  // --quiet: no progress bars
};

// What archiveBefore did: cut.seq 0 when it archived nothing, `none`
// saying why (alreadyArchived: every record before the time is in the
// archive already).
struct ArchiveOutcome {
  ArchiveCut cut;                 // the new cut
  std::uint64_t checkpoints = 0;  // written after it
  bool alreadyArchived = false;
  std::string none;
};

// The cut of the records before `beforeNs` into request.to, in the order
// above (request.before only names the time in messages). Used by
// runArchive and by the --watch daemon's upkeep (tools/ledger_upkeep.h),
// which runs it beside the appender: it reads committed records and makes
// the cut in one write batch. Throws UsageError for a DIR it refuses,
// ReplayError for a ledger or archive it cannot read or write.
ArchiveOutcome archiveBefore(Ledger& ledger, std::int64_t beforeNs, const ArchiveRequest& request);

int runArchive(Ledger& ledger, const ArchiveRequest& request);

// The sealed archive in `dir` of the cut ledger `live`, opened read-only, to
// answer a moment before the cut (`--archive DIR` of ledger-query and
// ledger-replay). UsageError when `live` was not cut; ProgramError (exit 3)
// when DIR holds no sealed archive holding the live ledger's link.
std::unique_ptr<Ledger> openArchiveOf(const Ledger& live, const std::string& dir);

// `ledger-replay verify --archive DIR`: the archive and the cut ledger as one
// chain. `verify` is `ledger-replay verify` of one ledger (its report on
// `out`, its exit code); the archive in DIR is verified alone, its seal
// must state the live ledger's link (the last archived seq and its chain
// hash, Ledger::archiveCut), and the live ledger is verified from the
// link, with the entries its cut kept of the archived records checked
// against the archive (`verify`'s second argument: VerifyOptions::archive;
// null for the archive itself). Text: each report under a heading, then the
// link; JSON: one object {"archive": ..., "link": ..., "live": ...}. Exit 0
// when all hold, else the worst exit code. UsageError when the ledger was
// not cut.
int runVerifyWithArchive(
    const Ledger& live, const std::string& archiveDir, bool json,
    const std::function<int(const Ledger&, const Ledger* archive, std::ostream&)>& verify,
    std::ostream& out);

}  // namespace ledger::cli
