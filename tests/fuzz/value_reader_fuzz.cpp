// libFuzzer target for the decoder of untrusted input: the stream framer,
// JSON/YAML parsing, event normalisation and projection.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "projector.h"
#include "value_reader.h"
#include "watch_event.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  ledger::ingest::ValueReader reader(in, 1 << 20);
  ledger::ingest::DecodedValue value;
  while (reader.next(&value)) {
    if (!value.error.empty()) continue;
    auto normalized = ledger::ingest::normalizeValue(std::move(value.value));
    for (const auto& ev : normalized.events) {
      if (ev.object.is_object()) (void)ledger::ingest::projectObject(ev.object);
    }
  }
  return 0;
}
