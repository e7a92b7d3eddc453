#include "ledger/scratch_message.h"

#include <cstring>
#include <optional>
#include <vector>

namespace ledger {

struct ScratchMessage::State {
  explicit State(std::size_t words) : firstSegment(kj::heapArray<capnp::word>(words)) {
    std::memset(firstSegment.begin(), 0, firstSegment.asBytes().size());
  }
  // Declared before the message, so destroyed after it: the message's
  // destructor zeroes the part of the segment it used.
  kj::Array<capnp::word> firstSegment;
  std::optional<capnp::MallocMessageBuilder> message;
  std::string table;
  std::vector<std::string_view> parts;
};

ScratchMessage::ScratchMessage(std::size_t firstSegmentWords)
    : state_(std::make_unique<State>(firstSegmentWords)) {}
ScratchMessage::~ScratchMessage() = default;

capnp::MessageBuilder& ScratchMessage::start() {
  State& st = *state_;
  st.message.reset();
  st.message.emplace(kj::arrayPtr(st.firstSegment.begin(), st.firstSegment.size()));
  return *st.message;
}

std::span<const std::string_view> ScratchMessage::parts() {
  State& st = *state_;
  st.table.clear();
  st.parts.clear();
  if (!st.message) return st.parts;
  const auto segments = st.message->getSegmentsForOutput();
  const auto put32 = [&st](std::size_t v) {
    for (int shift = 0; shift < 32; shift += 8) st.table.push_back(static_cast<char>(v >> shift));
  };
  put32(segments.size() - 1);
  for (const auto& segment : segments) put32(segment.size());
  if (st.table.size() % sizeof(capnp::word) != 0) put32(0);
  st.parts.emplace_back(st.table);
  for (const auto& segment : segments) {
    const auto bytes = segment.asBytes();
    st.parts.emplace_back(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
  }
  return st.parts;
}

std::string ScratchMessage::bytes() {
  const auto all = parts();
  std::size_t size = 0;
  for (std::string_view p : all) size += p.size();
  std::string out;
  out.reserve(size);
  for (std::string_view p : all) out.append(p);
  return out;
}

}  // namespace ledger
