// A Cap'n Proto message builder that keeps its first segment from one
// message to the next, and hands a finished message out in the parts of
// Cap'n Proto's stream framing instead of one flat array.
//
// Why: the ledger builds a message per recorded event (the projection on the
// reading thread, the LogRecord on the writing one). A fresh
// MallocMessageBuilder callocs its first segment every time, and
// messageToFlatArray plus a string copies the message twice more; the
// framing's parts can go to SHA-256 and RocksDB as they lie. Cap'n Proto
// zeroes what a message used of a caller's first segment when the message
// goes, so the segment is ready for the next one.
//
// The bytes are those a MallocMessageBuilder with the same first segment size
// gives (the size matters: what does not fit goes to a second segment).
// Ownership: owns its segment and the current message. Lifetimes: the
// builder from start() and the views from parts() are valid until the next
// start() or the destruction. Thread safety: none; not reentrant (one message
// at a time). Errors: throws kj::Exception only when memory runs out.
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace ledger {

class ScratchMessage {
 public:
  explicit ScratchMessage(std::size_t firstSegmentWords);
  ~ScratchMessage();
  ScratchMessage(const ScratchMessage&) = delete;
  ScratchMessage& operator=(const ScratchMessage&) = delete;

  // Drops the current message and starts an empty one.
  capnp::MessageBuilder& start();

  // The current message as capnp::messageToFlatArray writes it: the segment
  // table (segment count - 1, each segment's size in words, little-endian
  // 32-bit, padded to a word), then each segment.
  std::span<const std::string_view> parts();

  // The same parts joined.
  std::string bytes();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ledger
