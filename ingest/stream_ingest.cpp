#include "ingest/stream_ingest.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace ledger::ingest {

namespace {

// A chunk ends after this many values or bytes: the threads meet once per
// chunk, and 64 KiB is what ValueReader reads at a time, so a slow stream
// (kubectl get -w into stdin) waits for about one more read, not for a long
// chunk. (Handing the writer each value while it idles costs a futex wake per
// value, a visible share of the reader thread's time.)
constexpr std::size_t kChunkValues = 64;
constexpr std::uint64_t kChunkBytes = 64 * 1024;

// One decoded value: its rejections and its prepared events.
struct DecodedItem {
  std::uint64_t line = 0;
  std::uint64_t offset = 0;
  std::uint64_t endOffset = 0;
  std::vector<std::string> errors;
  std::vector<PreparedEvent> events;
};

DecodedItem decode(DecodedValue& value, const ProjectionOptions& projection) {
  DecodedItem item;
  item.line = value.line;
  item.offset = value.offset;
  item.endOffset = value.endOffset;
  if (!value.error.empty()) {
    item.errors.push_back(std::move(value.error));
    return item;
  }
  NormalizeResult normalized = normalizeValue(std::move(value.value));
  // The reader writes the stored JSON only for a watch event or a bare
  // object, each of which gives at most one event: that object.
  if (!value.storedObjectJson.empty() && normalized.events.size() == 1) {
    normalized.events.front().storedJson = std::move(value.storedObjectJson);
    normalized.events.front().projection = std::move(value.projection);
  }
  item.errors = std::move(normalized.errors);
  item.events.reserve(normalized.events.size());
  for (WatchEvent& ev : normalized.events) {
    PreparedEvent prepared = prepareEvent(std::move(ev), projection);
    if (!prepared.rejection.empty()) {
      item.errors.push_back(std::move(prepared.rejection));
      continue;
    }
    prepared.line = value.line;
    item.events.push_back(std::move(prepared));
  }
  return item;
}

bool stopped(const StreamOptions& options) {
  return options.stop != nullptr && options.stop->load(std::memory_order_relaxed);
}

class Recorder {
 public:
  Recorder(const std::string& source, Ingester& ingester, const StreamOptions& options)
      : source_(source), ingester_(ingester), options_(options) {}

  void record(DecodedItem& item) {
    ++totals.values;
    for (std::string& reason : item.errors) {
      ++totals.rejected;
      if (options_.onRejected) {
        options_.onRejected(StreamRejection{item.line, item.offset, std::move(reason)});
      }
    }
    for (PreparedEvent& ev : item.events) ingester_.record(source_, std::move(ev), item.endOffset);
  }

  StreamTotals totals;

 private:
  const std::string& source_;
  Ingester& ingester_;
  const StreamOptions& options_;
};

// The chunks between the reader thread and the writer, with the reader's end.
class ChunkQueue {
 public:
  explicit ChunkQueue(std::uint64_t bytesAhead) : bytesAhead_(bytesAhead) {}

  // Blocks while the queue is full; false once the writer has given up.
  bool push(std::vector<DecodedItem> chunk, std::uint64_t bytes) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queuedBytes_ < bytesAhead_ || cancelled_; });
    if (cancelled_) return false;
    chunks_.push_back({std::move(chunk), bytes});
    queuedBytes_ += bytes;
    changed_.notify_all();
    return true;
  }
  void finish(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    done_ = true;
    error_ = std::move(error);
    changed_.notify_all();
  }
  void cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    changed_.notify_all();
  }
  // The next chunk; false when the reader has finished and all are taken.
  bool pop(std::vector<DecodedItem>* chunk) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !chunks_.empty() || done_; });
    if (chunks_.empty()) return false;
    *chunk = std::move(chunks_.front().first);
    queuedBytes_ -= chunks_.front().second;
    chunks_.pop_front();
    changed_.notify_all();
    return true;
  }
  std::exception_ptr error() {
    std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  const std::uint64_t bytesAhead_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::vector<DecodedItem>, std::uint64_t>> chunks_;  // with input bytes
  std::uint64_t queuedBytes_ = 0;
  bool done_ = false;
  bool cancelled_ = false;
  std::exception_ptr error_;
};

// Sets `interrupted` before finishing the queue (whose mutex orders it
// before the writer's read of it).
void readChunks(ValueReader& reader, const StreamOptions& options, ChunkQueue& queue,
                bool& interrupted) {
  std::vector<DecodedItem> chunk;
  std::uint64_t chunkBytes = 0;
  std::exception_ptr error;
  try {
    DecodedValue value;
    while (!stopped(options) && reader.next(&value)) {
      chunkBytes += value.endOffset - value.offset;
      chunk.push_back(decode(value, options.reader.projectionOptions));
      if (chunk.size() >= kChunkValues || chunkBytes >= kChunkBytes) {
        if (!queue.push(std::move(chunk), chunkBytes)) return queue.finish(nullptr);
        chunk = {};
        chunkBytes = 0;
      }
    }
    // Also when the stream ended because of the stop (a stream that waits
    // for input may give up then): the end seen may not be the input's.
    interrupted = stopped(options);
  } catch (...) {
    error = std::current_exception();
  }
  // The values decoded before a failure are recorded before it is raised.
  if (!chunk.empty()) queue.push(std::move(chunk), chunkBytes);
  queue.finish(error);
}

}  // namespace

StreamTotals ingestStream(std::istream& in, const std::string& source, Ingester& ingester,
                          const StreamOptions& options) {
  ValueReader reader(in, options.reader);
  Recorder recorder(source, ingester, options);
  if (!options.pipelined) {
    DecodedValue value;
    while (!stopped(options) && reader.next(&value)) {
      DecodedItem item = decode(value, options.reader.projectionOptions);
      recorder.record(item);
    }
    recorder.totals.interrupted = stopped(options);
  } else {
    ChunkQueue queue(options.bytesAhead);
    bool interrupted = false;
    std::jthread readerThread([&] { readChunks(reader, options, queue, interrupted); });
    try {
      std::vector<DecodedItem> chunk;
      while (queue.pop(&chunk)) {
        for (DecodedItem& item : chunk) recorder.record(item);
      }
    } catch (...) {
      queue.cancel();
      throw;  // the jthread joins the reader on the way out
    }
    readerThread.join();
    if (std::exception_ptr error = queue.error()) std::rethrow_exception(error);
    recorder.totals.interrupted = interrupted;
  }
  recorder.totals.bytes = reader.bytesConsumed();
  ingester.advance(source, recorder.totals.bytes);
  return recorder.totals;
}

}  // namespace ledger::ingest
