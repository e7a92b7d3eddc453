#include "replay/fold/scan_ahead.h"

#include <kj/exception.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ledger::replay {

namespace {

// Records copied out of RocksDB's blocks, about 1 MiB at a time: the
// hand-over costs a lock per batch, not per record.
struct Batch {
  static constexpr std::size_t kWords = (1 << 20) / sizeof(capnp::word);
  struct Entry {
    std::uint64_t seq;
    std::size_t offset;  // in words
    std::size_t size;
  };
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(kWords);
  std::size_t used = 0;
  std::vector<Entry> entries;

  bool fits(std::size_t n) const { return used + n <= words.size(); }
  void add(std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
    if (!fits(w.size())) {  // only ever for a record bigger than a batch
      auto bigger = kj::heapArray<capnp::word>(used + w.size());
      if (used != 0) std::memcpy(bigger.begin(), words.begin(), used * sizeof(capnp::word));
      words = std::move(bigger);
    }
    if (w.size() != 0) std::memcpy(words.begin() + used, w.begin(), w.size() * sizeof(capnp::word));
    entries.push_back({seq, used, w.size()});
    used += w.size();
  }
  void clear() {
    used = 0;
    entries.clear();
  }
};

// A bounded queue of full batches and a pool of empty ones; at most
// kInFlight batches exist, so memory stays a few MiB whatever the scan.
class Handover {
 public:
  static constexpr std::size_t kInFlight = 4;

  // Producer: an empty batch, or nullptr once the consumer has stopped.
  std::unique_ptr<Batch> takeEmpty() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stopped_ || !empty_.empty() || created_ < kInFlight; });
    if (stopped_) return nullptr;
    if (!empty_.empty()) {
      auto b = std::move(empty_.back());
      empty_.pop_back();
      return b;
    }
    ++created_;
    return std::make_unique<Batch>();
  }
  void pushFull(std::unique_ptr<Batch> b) {
    std::lock_guard lock(mu_);
    full_.push_back(std::move(b));
    cv_.notify_all();
  }
  void finish(Status st) {
    std::lock_guard lock(mu_);
    finished_ = true;
    scanStatus_ = std::move(st);
    cv_.notify_all();
  }
  // Consumer: the next full batch, or nullptr when the scan has finished.
  std::unique_ptr<Batch> takeFull() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return finished_ || !full_.empty(); });
    if (full_.empty()) return nullptr;
    auto b = std::move(full_.front());
    full_.pop_front();
    return b;
  }
  void giveBack(std::unique_ptr<Batch> b) {
    b->clear();
    std::lock_guard lock(mu_);
    empty_.push_back(std::move(b));
    cv_.notify_all();
  }
  void stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }
  Status scanStatus() {
    std::lock_guard lock(mu_);
    return scanStatus_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Batch>> full_;
  std::vector<std::unique_ptr<Batch>> empty_;
  std::size_t created_ = 0;
  bool finished_ = false;
  bool stopped_ = false;
  Status scanStatus_;
};

}  // namespace

Status scanProjectionAhead(
    const Ledger& ledger, std::uint64_t from, std::uint64_t to,
    const std::function<bool(std::uint64_t, kj::ArrayPtr<const capnp::word>)>& fn) {
  Handover handover;
  std::thread reader([&] {
    Status st;
    try {
      std::unique_ptr<Batch> batch = handover.takeEmpty();
      if (!batch) return handover.finish(Status::ok());
      st = ledger.scanProjectionWords(from, to,
                                      [&](std::uint64_t seq, kj::ArrayPtr<const capnp::word> w) {
                                        if (!batch->fits(w.size()) && !batch->entries.empty()) {
                                          handover.pushFull(std::move(batch));
                                          batch = handover.takeEmpty();
                                          if (!batch) return false;  // the consumer stopped
                                        }
                                        batch->add(seq, w);
                                        return true;
                                      });
      if (batch && !batch->entries.empty()) handover.pushFull(std::move(batch));
    } catch (const std::exception& e) {  // std::bad_alloc
      st = Status::ioError(std::string("reading the projection ahead: ") + e.what());
    }
    handover.finish(std::move(st));
  });
  // Whatever happens on this side, the reader is told to stop and joined.
  struct Joiner {
    Handover& handover;
    std::thread& reader;
    ~Joiner() {
      handover.stop();
      reader.join();
    }
  } joiner{handover, reader};

  while (std::unique_ptr<Batch> batch = handover.takeFull()) {
    for (const Batch::Entry& e : batch->entries) {
      bool more = true;
      try {
        more = fn(e.seq, kj::ArrayPtr<const capnp::word>(batch->words.begin() + e.offset, e.size));
      } catch (const kj::Exception& ex) {
        return Status::corruption("seq " + std::to_string(e.seq) +
                                  ": projection does not decode: " + ex.getDescription().cStr());
      }
      if (!more) return Status::ok();
    }
    handover.giveBack(std::move(batch));
  }
  return handover.scanStatus();
}

Status scanProjectionAheadIfLong(
    const Ledger& ledger, std::uint64_t from, std::uint64_t to,
    const std::function<bool(std::uint64_t, kj::ArrayPtr<const capnp::word>)>& fn) {
  const bool twoCores = std::thread::hardware_concurrency() > 1;
  if (!twoCores || to < from || to - from < kShortScanRecords) {
    return ledger.scanProjectionWords(from, to, fn);
  }
  return scanProjectionAhead(ledger, from, to, fn);
}

}  // namespace ledger::replay
