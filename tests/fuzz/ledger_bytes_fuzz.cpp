// libFuzzer target for the decoders of the ledger's own stored bytes. A
// ledger directory handed to `ledger-replay verify` or to a query may be
// damaged or written by something else, so its values are untrusted input.
// Each part of the input (parts split on "----") is decoded as a log record
// (decodeRecord) and folded as a ProjectedRecord (seq 1, 2, ...) into a
// ClusterState; the parts that `ledger-replay verify` accepts
// (ledger::checkProjection: decoded in full, reading no more than the
// message holds) are also folded into a second state, whose report is built
// and digested. Failures are expected: a Status from decodeRecord,
// kj::Exception from apply() and digest(), a ReplayError (corrupt) from
// buildReport - a pointer of the wrong type passes verify and fails where it
// is read - as cluster_state.h and report.h document. A crash, a sanitizer
// report, a hang or any other exception is a bug. Reports over parts verify
// rejects are not built: a list of zero-sized elements or pointers sharing
// one list make a message read as far more than it holds, and stored
// objects' readers have no traversal limit (cluster_state.cpp). Seeds: the
// values of real ledgers' log and projection families (docs/testing.md, "Fuzzing").
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "cluster_state.h"
#include "record.h"
#include "replayer.h"
#include "report.h"
#include "verify.h"

namespace {

constexpr std::string_view kSeparator = "----";

std::vector<std::string_view> parts(std::string_view input) {
  std::vector<std::string_view> out;
  for (;;) {
    const std::size_t at = input.find(kSeparator);
    out.push_back(input.substr(0, at));
    if (at == std::string_view::npos) return out;
    input.remove_prefix(at + kSeparator.size());
  }
}

// Stored values carry no alignment; the ledger copies them into words too.
std::vector<capnp::word> toWords(std::string_view bytes) {
  std::vector<capnp::word> words(bytes.size() / sizeof(capnp::word));
  if (!words.empty()) std::memcpy(words.data(), bytes.data(), words.size() * sizeof(capnp::word));
  return words;
}

void fold(ledger::replay::ClusterState& state, std::uint64_t seq,
          const std::vector<capnp::word>& words) {
  try {
    state.apply(seq, kj::arrayPtr(words.data(), words.size()));
  } catch (const kj::Exception&) {
    // Does not decode as a ProjectedRecord: replay reports the seq.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  ledger::replay::ClusterState any, state;
  std::uint64_t seq = 0;
  for (std::string_view part : parts(input)) {
    ++seq;
    ledger::Record record;
    (void)ledger::decodeRecord(part, &record);  // a Status either way
    const std::vector<capnp::word> words = toWords(part);
    fold(any, seq, words);
    if (ledger::checkProjection(part).isOk()) fold(state, seq, words);
  }
  try {
    (void)ledger::replay::buildReport(state);
    (void)state.digest();
  } catch (const ledger::replay::ReplayError& e) {
    if (!e.corrupt()) __builtin_trap();
  } catch (const kj::Exception&) {
    // From digest(), on this thread (cluster_state.h, "Errors").
  }
  return 0;
}
