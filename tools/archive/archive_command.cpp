#include "tools/archive/archive_command.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>

#include "ingest/ingester.h"
#include "ledger/archive.h"
#include "replay/fold/checkpoints.h"
#include "replay/fold/replayer.h"
#include "replay/kueue/usage_rollups.h"
#include "replay/kueue/wait_store.h"
#include "schema/k8s/rfc3339.h"
#include "tools/program.h"
#include "tools/progress.h"
#include "tools/time_flags.h"

namespace ledger::cli {

// Named, not anonymous: the unity build compiles the program as one unit.
namespace archive_command {

void killHere(std::string_view point) {
  const char* hook = std::getenv("LEDGER_TEST_KILL_ARCHIVE");
  if (hook != nullptr && point == hook) std::raise(SIGKILL);
}

void check(const Status& st) {
  if (st.isOk()) return;
  if (st.code() == Status::Code::kInvalidArgument) throw UsageError(st.message());
  throw replay::ReplayError(st);
}

// The last record before `beforeNs`, which must leave the live ledger at
// least its last record and fall inside the hours the rollups cover (the
// rollups after the cut go on from their end, folding the state there); 0
// with *none saying why when no record is.
std::uint64_t cutSeq(const Ledger& ledger, std::int64_t beforeNs, const std::string& before,
                     std::string* none) {
  // A cut ledger archives nothing before its cut again (the caller: none).
  if (const auto cut = ledger.archiveCut(); cut && beforeNs - 1 < cut->timeNs) return cut->seq;
  std::uint64_t seq = 0;
  check(ledger.seqAtOrBefore(beforeNs - 1, &seq));
  if (seq == 0) {
    *none = "--before " + before + ": no record is earlier: nothing to archive";
    return 0;
  }
  if (seq >= ledger.lastSeq()) {
    *none = "--before " + before +
            ": every record is earlier; the live ledger keeps at least its last record";
    return 0;
  }
  const auto coverage = replay::usageRollupCoverage(ledger);
  std::int64_t timeNs = 0;
  check(ledger.timeOf(seq, &timeNs));
  if (!coverage || timeNs >= coverage->endNs) {
    *none = "--before " + before +
            ": the cut must come before the last whole hour the usage rollups cover "
            "(the hour the ledger's last record is in stays open)";
    return 0;
  }
  return seq;
}

Digest storedHash(const Ledger& ledger, std::uint64_t seq) {
  Digest hash{};
  check(ledger.scanLogBytes(seq, seq, [&](std::uint64_t, const Digest& stored, std::string_view) {
    hash = stored;
    return false;
  }));
  return hash;
}

// A sealed archive in `dir` of exactly records 1..seq of this ledger (a
// rerun after a kill before the cut), or nullopt when `dir` holds no seal
// or (a cut ledger) the archive sealed at the cut, to extend.
std::optional<ArchiveSeal> sealedBefore(const Ledger& ledger, const std::string& dir,
                                        std::uint64_t seq) {
  std::optional<ArchiveSeal> seal;
  check(readArchiveSeal(dir, &seal));
  if (!seal) return std::nullopt;
  if (const auto& cut = ledger.archiveCut(); cut && seal->lastSeq < seq) {
    const Digest link = seal->lastSeq == cut->seq  ? cut->hash
                        : seal->lastSeq > cut->seq ? storedHash(ledger, seal->lastSeq)
                                                   : Digest{};
    if (seal->lastSeq >= cut->seq && seal->lastHash == link) return std::nullopt;
  }
  if (seal->lastSeq != seq || seal->lastHash != storedHash(ledger, seq)) {
    throw UsageError(dir + " already holds a sealed archive of other records (to seq " +
                     std::to_string(seal->lastSeq) + "); name a new directory");
  }
  return seal;
}

// The usage rollups of `ledger`, with their bar (a fold of the whole log).
void writeRollups(Ledger& ledger, const std::string& label, bool quiet) {
  ProgressBar progress(label, quiet);
  replay::FoldOptions fo;
  fo.progress = progress.callback();
  replay::writeUsageRollups(ledger, fo);
}

void writeCheckpointsShown(Ledger& ledger, std::uint64_t every, const std::string& label,
                           bool quiet) {
  ProgressBar progress(label, quiet);
  replay::writeCheckpoints(ledger, every, progress.callback());
}

ArchiveSeal writeSealed(const Ledger& ledger, std::uint64_t seq, const ArchiveRequest& request) {
  ArchiveSeal seal;
  {
    // The copy derives each record's projection in order: the seq it
    // derives is how far the copy has come.
    ProgressBar progress("archive", request.quiet);
    ArchiveOptions options;
    options.derive.project = [&](const Record& r) {
      progress.update(r.seq, seq);
      return ingest::projectJsonText(r.objectJson, request.projection);
    };
    options.derive.dedupeKey = ingest::dedupeKeyOf;
    options.beforeSeal = [&](Ledger& archive) {
      progress.done();
      try {
        writeCheckpointsShown(archive, request.checkpointEvery, "archive checkpoints",
                              request.quiet);
        writeRollups(archive, "archive usage rollups", request.quiet);
      } catch (const replay::ReplayError& e) {
        return e.status();
      }
      return Status::ok();
    };
    check(ledger.archiveCut() ? extendArchive(ledger, seq, request.to, options, &seal)
                              : writeArchive(ledger, seq, request.to, options, &seal));
  }
  return seal;
}

// The state at the cut, with its bar.
replay::ClusterState foldToCut(const Ledger& ledger, std::uint64_t seq, bool quiet) {
  ProgressBar progress("fold to the cut", quiet);
  replay::FoldOptions fo;
  fo.progress = progress.callback();
  return replay::Replayer(ledger).foldTo(seq, fo);
}

// Whether the sealed archive in `dir` ends at the live ledger's link; the
// problem otherwise (empty when it does).
std::string linkProblem(const Ledger& live, const ArchiveCut& cut, const std::string& dir,
                        const Ledger& archive) {
  std::optional<ArchiveSeal> seal;
  Status st = readArchiveSeal(dir, &seal);
  if (st.isOk() && !seal)
    st = Status::corruption(dir + " holds no seal (" + kArchiveSealFile + ")");
  if (st.isOk()) st = checkArchiveSeal(archive, *seal);
  if (!st.isOk()) return st.message();
  // An archive extended past the cut (a second archive killed before its
  // cut) still holds the link; its records after it must be the live
  // ledger's own.
  const bool holdsLink = seal->lastSeq == cut.seq
                             ? seal->lastHash == cut.hash
                             : seal->lastSeq > cut.seq &&
                                   storedHash(archive, cut.seq) == cut.hash &&
                                   seal->lastSeq <= live.lastSeq() &&
                                   storedHash(live, seal->lastSeq) == seal->lastHash;
  if (!holdsLink) {
    return "the archive's seal (seq " + std::to_string(seal->lastSeq) + ", hash " +
           toHex(seal->lastHash) + ") is not the live ledger's link (seq " +
           std::to_string(cut.seq) + ", hash " + toHex(cut.hash) + ")";
  }
  return {};
}

}  // namespace archive_command

ArchiveOutcome archiveBefore(Ledger& ledger, std::int64_t beforeNs, const ArchiveRequest& request) {
  using namespace archive_command;
  const std::string dir = std::filesystem::absolute(request.to).lexically_normal().string();
  // One archive holds every record before the cut: a later archive extends
  // it, so that one --archive DIR answers and verifies them all.
  if (const auto cut = ledger.archiveCut(); cut && dir != cut->archiveDir) {
    throw UsageError("ledger " + ledger.directory() + " was cut already at seq " +
                     std::to_string(cut->seq) + " into the archive " + cut->archiveDir +
                     ": archive again with --to " + cut->archiveDir + " (it is extended), not " +
                     request.to);
  }
  // Rollups first: the hours before the cut are answered from them after it.
  writeRollups(ledger, "usage rollups", request.quiet);
  ArchiveOutcome outcome;
  const std::uint64_t seq = cutSeq(ledger, beforeNs, request.before, &outcome.none);
  if (seq == 0) return outcome;
  if (const auto cut = ledger.archiveCut(); cut && seq <= cut->seq) {
    outcome.alreadyArchived = true;
    outcome.none = "nothing to archive: records 1.." + std::to_string(cut->seq) + " (to " +
                   formatRfc3339(cut->timeNs) + ") are in the archive " + cut->archiveDir +
                   " already, and none after them is before " + request.before;
    return outcome;
  }
  std::optional<ArchiveSeal> seal = sealedBefore(ledger, request.to, seq);
  if (seal) {
    spdlog::info("{} holds the sealed archive of records 1..{}: making the cut", request.to, seq);
  } else {
    seal = writeSealed(ledger, seq, request);
  }
  killHere("after-archive");
  // The checkpoint at the cut copies every object it names: no record at
  // or before the cut stays for it to name.
  replay::ClusterState state = foldToCut(ledger, seq, request.quiet);
  replay::CopiedVersions copies;
  const std::vector<std::string> chunks = replay::copyLongLived(state, 0, copies);
  std::int64_t firstTimeNs = 0;
  check(ledger.timeOf(1, &firstTimeNs));
  outcome.cut = ArchiveCut{seq, seal->lastHash, seal->lastTimeNs, firstTimeNs, dir};
  // The waits after the cut start from the archived records' wait follower.
  replay::carryWaitState(ledger, seq);
  check(ledger.cutArchived(outcome.cut, state.serialize(copies), chunks));
  killHere("after-cut");
  {
    ProgressBar progress("checkpoint", request.quiet);
    outcome.checkpoints =
        replay::writeCheckpoints(ledger, request.checkpointEvery, progress.callback());
  }
  return outcome;
}

int runArchive(Ledger& ledger, const ArchiveRequest& request) {
  const std::int64_t beforeNs =
      parseTimeArg(request.before, "--before", TimeBeyondRange::kClamp,
                   lastRecordEnd([&]() -> const Ledger& { return ledger; }));
  const ArchiveOutcome outcome = archiveBefore(ledger, beforeNs, request);
  if (outcome.cut.seq == 0) {
    // Records archived already are a rerun's answer (exit 0); a --before
    // that would cut nothing, or too much, is refused.
    if (!outcome.alreadyArchived) throw UsageError(outcome.none);
    std::cout << outcome.none << "\n";
    return kExitOk;
  }
  std::cout << "archived records 1.." << outcome.cut.seq << " to " << outcome.cut.archiveDir
            << " (sealed, hash " << toHex(outcome.cut.hash) << "); the live ledger holds "
            << outcome.cut.seq + 1 << ".." << ledger.lastSeq() << " and " << outcome.checkpoints + 1
            << " checkpoints\n";
  return kExitOk;
}

std::unique_ptr<Ledger> openArchiveOf(const Ledger& live, const std::string& dir) {
  const auto& cut = live.archiveCut();
  if (!cut) {
    throw UsageError("--archive: ledger " + live.directory() +
                     " was not cut (ledger-replay archive); it answers alone");
  }
  Ledger::Options readOnly;
  readOnly.readOnly = true;
  readOnly.createIfMissing = false;
  std::unique_ptr<Ledger> archive;
  if (Status st = Ledger::open(dir, readOnly, &archive); !st.isOk()) throw ProgramError(st);
  if (const std::string problem = archive_command::linkProblem(live, *cut, dir, *archive);
      !problem.empty()) {
    throw ProgramError("--archive " + dir + ": " + problem, kExitCorrupt);
  }
  return archive;
}

int runVerifyWithArchive(
    const Ledger& live, const std::string& archiveDir, bool json,
    const std::function<int(const Ledger&, const Ledger* archive, std::ostream&)>& verify,
    std::ostream& out) {
  const auto& cut = live.archiveCut();
  if (!cut) {
    throw UsageError("--archive: ledger " + live.directory() +
                     " was not cut (ledger-replay archive); verify it alone");
  }
  Ledger::Options readOnly;
  readOnly.readOnly = true;
  readOnly.createIfMissing = false;
  std::unique_ptr<Ledger> archive;
  archive_command::check(Ledger::open(archiveDir, readOnly, &archive));
  std::ostringstream archiveOut, liveOut;
  const int archiveCode = verify(*archive, nullptr, archiveOut);
  const std::string link = archive_command::linkProblem(live, *cut, archiveDir, *archive);
  const int liveCode = verify(live, archive.get(), liveOut);
  const int code =
      std::max({archiveCode, liveCode, static_cast<int>(link.empty() ? kExitOk : kExitCorrupt)});
  if (!link.empty()) spdlog::error("verification failed at the link to {}: {}", archiveDir, link);
  if (json) {
    nlohmann::ordered_json j;
    j["ok"] = code == kExitOk;
    j["archive"] = nlohmann::ordered_json::parse(archiveOut.str());
    j["link"] = {{"ok", link.empty()}, {"seq", cut->seq}, {"hash", toHex(cut->hash)}};
    if (!link.empty()) j["link"]["problem"] = link;
    j["live"] = nlohmann::ordered_json::parse(liveOut.str());
    out << j.dump(2) << "\n";
    return code;
  }
  out << "archive " << archiveDir << ":\n" << archiveOut.str();
  out << "link: "
      << (link.empty() ? "the archive's seal is the live ledger's link at seq " +
                             std::to_string(cut->seq) + " (" + toHex(cut->hash) + ")"
                       : "FAILED: " + link)
      << "\n";
  out << "live ledger " << live.directory() << ":\n" << liveOut.str();
  return code;
}

}  // namespace ledger::cli
