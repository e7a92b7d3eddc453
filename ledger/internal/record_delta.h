// Log records stored as deltas (format 8, format.h "log"): a record's
// LogRecord bytes compressed by zstd with the same object's previous record
// as the prefix it refers back into, so the fields a new version shares with
// the last one (a Pod's spec, a Workload's pod sets) are stored once.
//
// Why zstd's prefix and not a diff of our own: a prefix is zstd's documented
// delta mode (ZSTD_CCtx_refPrefix), it finds every repeated run wherever it
// moved, and the ledger links libzstd already (RocksDB's compression).
//
// The chain hash is over the full LogRecord bytes, never over the stored
// delta: a reader resolves a delta against its base (which may be a delta
// too, down to a full record) and hashes or decodes the result, so verify
// proves the bytes a delta stands for exactly as it proves a full record.
//
// Ownership: a DeltaCodec owns its zstd contexts; DeltaBases owns copies of
// the bases it keeps. Thread safety: none; one per thread (readers keep a
// thread_local codec, the appender its own). Errors: Status values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ledger/status.h"

namespace ledger {

// A stored log body (after the chain hash) that is a delta: its base's seq
// and the zstd frame. False for a full LogRecord message.
struct DeltaBody {
  std::uint64_t baseSeq = 0;
  std::string_view frame;
};
[[nodiscard]] bool parseDeltaBody(std::string_view body, DeltaBody* out);

class DeltaCodec {
 public:
  DeltaCodec();
  ~DeltaCodec();
  DeltaCodec(const DeltaCodec&) = delete;
  DeltaCodec& operator=(const DeltaCodec&) = delete;

  // The stored body of `record` as a delta against `base` (record `baseSeq`'s
  // full bytes); valid until the next call.
  std::string_view encode(std::uint64_t baseSeq, std::string_view base, std::string_view record);
  // The full bytes of a delta's `frame` against its base's full bytes.
  // Corruption when the frame does not decode against it.
  [[nodiscard]] Status decode(std::string_view base, std::string_view frame, std::string* out);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> zstd_;
  std::string body_;
};

// A scan's side: the full bytes of the records it passed, the newest within
// the window and a memory budget, so that the later records stored against
// them resolve without reading them again.
class RecentRecords {
 public:
  // What the kept records' strings may hold (their capacity, not only their
  // size), past the newest record.
  static constexpr std::size_t kBudget = 64 << 20;

  void keep(std::uint64_t seq, std::string_view bytes);
  // Record `seq`'s bytes, or null when not kept; valid until keep().
  const std::string* find(std::uint64_t seq) const;
  // The memory the kept records' strings hold.
  std::size_t bytesHeld() const { return bytes_; }

 private:
  std::map<std::uint64_t, std::string> bySeq_;
  std::size_t bytes_ = 0;
};

// The appender's side: the last record of each object recently written,
// which the object's next record is stored against, and the last record of
// each kind, which an object's first record is stored against (a new Pod
// shares most of its bytes with the last one created).
class DeltaBases {
 public:
  // The stored body for record `seq` of `objectKey` (group/kind/namespace/
  // name) with full bytes `record`: a delta against the object's previous
  // record, or else its kind's last, when that base is after `floor` (no
  // base at or before a cut), within the window and the chain's depth;
  // else `record` itself. Keeps `record` as the object's and the kind's
  // base. The view is valid until the next call.
  std::string_view body(std::uint64_t seq, std::string_view objectKey, std::string_view record,
                        std::uint64_t floor);
  // Forgets every base (an append that failed: its seqs will be reused).
  void clear() {
    byObject_.clear();
    byKind_.clear();
    bytes_ = 0;
  }

 private:
  struct Base {
    std::uint64_t seq = 0;
    std::uint32_t depth = 0;  // deltas between this record and a full one
    std::string bytes;
  };
  void sweep(std::uint64_t seq);
  bool usable(const Base& base, std::uint64_t seq, std::uint64_t floor) const;

  std::unordered_map<std::string, Base> byObject_;
  std::unordered_map<std::string, Base> byKind_;
  std::size_t bytes_ = 0;  // of byObject_'s records
  std::size_t sweepAt_ = 4096;
  DeltaCodec codec_;
};

}  // namespace ledger
