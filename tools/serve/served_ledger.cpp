#include "tools/serve/served_ledger.h"

#include <filesystem>
#include <stdexcept>

namespace ledger::serve {

namespace {

std::shared_ptr<const Ledger> openLedger(const std::string& dir) {
  std::unique_ptr<Ledger> ledger;
  Ledger::Options options;
  options.createIfMissing = false;
  options.readOnly = true;
  Status st = Ledger::open(dir, options, &ledger);
  if (!st.isOk()) throw std::runtime_error(st.toString());
  return std::shared_ptr<const Ledger>(std::move(ledger));
}

// The names, sizes and modification times of the ledger directory's files:
// a writer's commit changes its write-ahead log, a flush or compaction its
// tables and manifest.
std::string directorySignature(const std::string& dir) {
  std::string out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code e2;
    const auto size = entry.file_size(e2);
    const auto time = entry.last_write_time(e2).time_since_epoch().count();
    out += entry.path().filename().string() + ":" + std::to_string(size) + ":" +
           std::to_string(time) + "\n";
  }
  return out;
}

}  // namespace

ServedLedger::ServedLedger(std::string dir)
    : dir_(std::move(dir)),
      states_(std::make_unique<StateCache>()),
      answers_(std::make_unique<AnswerCache>(kAnswerEntries, kAnswerBytes)),
      proof_(std::make_unique<ProofWatch>(dir_)) {
  seen_ = directorySignature(dir_);
  auto first = std::make_shared<Snapshot>();
  first->ledger = openLedger(dir_);
  first->catalog = ResourceCatalog::discover(*first->ledger);
  snapshot_ = std::move(first);
}

std::shared_ptr<const ServedLedger::Snapshot> ServedLedger::current() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

void ServedLedger::refresh() {
  // Opening costs a read of the manifest and the log: only when a writer
  // has written something since.
  std::string now = directorySignature(dir_);
  if (now == seen_) return;
  // Noted as seen only once opened: an open that failed (a writer that kept
  // changing the files during it: busy) is tried again on the next round even
  // if the writer has gone quiet since.
  auto fresh = openLedger(dir_);
  seen_ = std::move(now);
  if (fresh->lastSeq() <= current()->ledger->lastSeq()) return;
  auto snap = std::make_shared<Snapshot>();
  snap->catalog = ResourceCatalog::discover(*fresh);
  snap->ledger = std::move(fresh);
  std::lock_guard lock(mu_);
  snapshot_ = std::move(snap);
}

}  // namespace ledger::serve
