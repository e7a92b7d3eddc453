#include "ledger/internal/record_delta.h"

// ZSTD_c_literalCompressionMode is in zstd's experimental section.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "ledger/format.h"

namespace ledger {

namespace {
// zstd's fastest regular level: a delta's matches are long runs of its base,
// which every level finds; higher levels cost the writing thread more.
constexpr int kDeltaLevel = 1;
// A record larger than this is refused as a decoded delta (a corrupt frame
// must not make a reader allocate what it says).
constexpr unsigned long long kMaxRecordBytes = 1ULL << 30;
// What the appender keeps of the objects' last records: the records of a
// few thousand objects, so a daemon's memory stays flat however busy the
// cluster.
constexpr std::size_t kBasesBudget = 32 << 20;
}  // namespace

// The size a magicless frame states (ZSTD_getFrameContentSize reads only
// frames with the magic number).
unsigned long long frameContentSize(std::string_view frame) {
  ZSTD_frameHeader header;
  if (ZSTD_getFrameHeader_advanced(&header, frame.data(), frame.size(), ZSTD_f_zstd1_magicless) !=
      0)
    return ZSTD_CONTENTSIZE_ERROR;
  return header.frameContentSize;
}

struct DeltaCodec::Contexts {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_DCtx* d = ZSTD_createDCtx();
  Contexts() {
    if (c == nullptr || d == nullptr) throw std::bad_alloc();
    ZSTD_DCtx_setParameter(d, ZSTD_d_format, ZSTD_f_zstd1_magicless);
  }
  ~Contexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};

bool parseDeltaBody(std::string_view body, DeltaBody* out) {
  const std::string_view marker = format::kDeltaMarker;
  if (body.size() < marker.size() + 8 || !body.starts_with(marker)) return false;
  out->baseSeq = format::decodeU64(body.substr(marker.size(), 8));
  out->frame = body.substr(marker.size() + 8);
  return true;
}

DeltaCodec::DeltaCodec() : zstd_(std::make_unique<Contexts>()) {
  ZSTD_CCtx_setParameter(zstd_->c, ZSTD_c_compressionLevel, kDeltaLevel);
  // The chain hash covers the result; a frame checksum would only repeat it.
  ZSTD_CCtx_setParameter(zstd_->c, ZSTD_c_checksumFlag, 0);
  // Literals raw: a delta's few new bytes are too few for a Huffman table of
  // their own, and the family's block compression (zstd with a dictionary)
  // compresses them across a block's records instead.
  ZSTD_CCtx_setParameter(zstd_->c, ZSTD_c_literalCompressionMode, ZSTD_ps_disable);
  ZSTD_CCtx_setParameter(zstd_->c, ZSTD_c_format, ZSTD_f_zstd1_magicless);
}

DeltaCodec::~DeltaCodec() = default;

std::string_view DeltaCodec::encode(std::uint64_t baseSeq, std::string_view base,
                                    std::string_view record) {
  body_.assign(format::kDeltaMarker);
  body_ += format::seqKey(baseSeq);
  const std::size_t at = body_.size();
  body_.resize(at + ZSTD_compressBound(record.size()));
  // A prefix applies to the next frame only (zstd.h, ZSTD_CCtx_refPrefix).
  ZSTD_CCtx_refPrefix(zstd_->c, base.data(), base.size());
  const std::size_t n =
      ZSTD_compress2(zstd_->c, body_.data() + at, body_.size() - at, record.data(), record.size());
  if (ZSTD_isError(n)) {
    // Only an allocation failure can fail here; the record is stored whole.
    ZSTD_CCtx_reset(zstd_->c, ZSTD_reset_session_only);
    return record;
  }
  body_.resize(at + n);
  return body_;
}

Status DeltaCodec::decode(std::string_view base, std::string_view frame, std::string* out) {
  const unsigned long long size = frameContentSize(frame);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > kMaxRecordBytes)
    return Status::corruption("a delta's frame does not state its size");
  out->resize(size);
  ZSTD_DCtx_refPrefix(zstd_->d, base.data(), base.size());
  const std::size_t n =
      ZSTD_decompressDCtx(zstd_->d, out->data(), out->size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != size) {
    ZSTD_DCtx_reset(zstd_->d, ZSTD_reset_session_only);
    return Status::corruption(std::string("a delta does not decode against its base: ") +
                              (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short"));
  }
  return Status::ok();
}

void RecentRecords::keep(std::uint64_t seq, std::string_view bytes) {
  // Enough for the records of a few thousand seqs: most bases are that
  // close, and a base dropped is read again, not lost.
  auto evictable = [&] {
    return !bySeq_.empty() &&
           (bySeq_.begin()->first + format::kDeltaWindow < seq || bytes_ > kBudget);
  };
  // The oldest record's node and its string's memory are reused for this
  // one: a scan keeps every record, and an allocation each cost it.
  std::map<std::uint64_t, std::string>::node_type node;
  while (evictable()) {
    bytes_ -= bySeq_.begin()->second.capacity();
    node = bySeq_.extract(bySeq_.begin());
  }
  std::size_t held = 0;
  if (node.empty()) {
    held = bySeq_.emplace_hint(bySeq_.end(), seq, std::string(bytes))->second.capacity();
  } else {
    node.key() = seq;
    // A string keeps its largest size's memory: reused as it is, each node
    // would grow to the largest record it ever held (a ResourceSlice's) and
    // the kept records would hold several times the budget.
    if (node.mapped().capacity() > 2 * bytes.size()) {
      // Swapped, not assigned: a move-assignment of a short string copies
      // it into the large buffer and keeps that.
      std::string fitting(bytes);
      node.mapped().swap(fitting);
    } else {
      node.mapped().assign(bytes);
    }
    held = node.mapped().capacity();
    bySeq_.insert(bySeq_.end(), std::move(node));
  }
  bytes_ += held;
}

const std::string* RecentRecords::find(std::uint64_t seq) const {
  auto it = bySeq_.find(seq);
  return it == bySeq_.end() ? nullptr : &it->second;
}

bool DeltaBases::usable(const Base& base, std::uint64_t seq, std::uint64_t floor) const {
  return base.seq > floor && base.seq + format::kDeltaWindow >= seq &&
         base.depth < format::kDeltaMaxDepth;
}

std::string_view DeltaBases::body(std::uint64_t seq, std::string_view objectKey,
                                  std::string_view record, std::uint64_t floor) {
  if (byObject_.size() >= sweepAt_ || bytes_ > kBasesBudget) sweep(seq);
  auto [object, added] = byObject_.try_emplace(std::string(objectKey));
  // "group/kind/": the object key up to its second '/'.
  const std::size_t kindEnd = objectKey.find('/', objectKey.find('/') + 1);
  auto kind = byKind_.try_emplace(std::string(objectKey.substr(0, kindEnd + 1))).first;
  const Base* base = nullptr;
  if (!added && usable(object->second, seq, floor)) {
    base = &object->second;
  } else if (kind->second.seq != 0 && usable(kind->second, seq, floor)) {
    base = &kind->second;
  }
  std::string_view stored = record;
  std::uint32_t depth = 0;
  if (base != nullptr) {
    stored = codec_.encode(base->seq, base->bytes, record);
    // Stored whole after all when the delta would not be smaller.
    if (stored.size() >= record.size()) {
      stored = record;
    } else {
      depth = base->depth + 1;
    }
  }
  bytes_ += record.size();
  bytes_ -= object->second.bytes.size();
  for (Base* kept : {&object->second, &kind->second}) {
    kept->seq = seq;
    kept->depth = depth;
    kept->bytes.assign(record);
  }
  return stored;
}

void DeltaBases::sweep(std::uint64_t seq) {
  // Bases out of the window are never used again; past the budget, the
  // oldest go too (their objects' next records are stored against their
  // kind's last, or whole). Down to half the budget, so that sweeps stay
  // rare.
  std::erase_if(byObject_,
                [&](const auto& e) { return e.second.seq + format::kDeltaWindow < seq; });
  bytes_ = 0;
  for (const auto& [key, base] : byObject_) bytes_ += base.bytes.size();
  if (bytes_ > kBasesBudget / 2) {
    std::vector<std::pair<std::uint64_t, std::size_t>> bySeq;
    bySeq.reserve(byObject_.size());
    for (const auto& [key, base] : byObject_) bySeq.emplace_back(base.seq, base.bytes.size());
    std::sort(bySeq.begin(), bySeq.end(), std::greater<>());
    std::size_t kept = 0;
    std::uint64_t oldestKept = 0;
    for (const auto& [baseSeq, size] : bySeq) {
      if (kept + size > kBasesBudget / 2) break;
      kept += size;
      oldestKept = baseSeq;
    }
    std::erase_if(byObject_, [&](const auto& e) { return e.second.seq < oldestKept; });
    bytes_ = kept;
  }
  sweepAt_ = std::max<std::size_t>(4096, byObject_.size() * 2);
}

}  // namespace ledger
