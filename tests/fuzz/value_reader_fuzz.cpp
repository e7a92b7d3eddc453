// libFuzzer target for the decoder of untrusted input: the stream framer,
// JSON/YAML parsing, event normalisation and projection. It reads the input
// framed byte by byte, then again as ledger-ingest does (the JSON Lines fast
// path, dropManagedFields, storedJson, projection), and aborts unless every
// object handed on - the JSON written for it from simdjson, its identity and
// its projection from the DOM - is what the first read gives once the
// Ingester has dropped the watched object's metadata.managedFields, dumped
// it and projected it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "ingest/ingester.h"
#include "ingest/projector.h"
#include "ingest/value_reader.h"
#include "ingest/watch_event.h"

namespace {

// Objects as the Ingester would store them, in order; errors as strings.
std::vector<std::string> decode(const std::string& input, bool dropManagedFields) {
  std::istringstream in(input);
  ledger::ingest::ValueReader::Options options;
  options.maxValueBytes = 1 << 20;
  options.dropManagedFields = dropManagedFields;
  options.storedJson = dropManagedFields;
  options.projection = dropManagedFields;
  options.wholeLines = dropManagedFields;
  ledger::ingest::ValueReader reader(in, options);
  ledger::ingest::DecodedValue value;
  std::vector<std::string> out;
  while (reader.next(&value)) {
    out.push_back("at " + std::to_string(value.line) + ":" + std::to_string(value.offset) + "-" +
                  std::to_string(value.endOffset));
    if (!value.error.empty()) {
      out.push_back("error: " + value.error);
      continue;
    }
    auto normalized = ledger::ingest::normalizeValue(std::move(value.value));
    for (const auto& e : normalized.errors) out.push_back("rejected: " + e);
    // As stream_ingest.cpp hands the stored JSON on.
    const bool stored = !value.storedObjectJson.empty() && normalized.events.size() == 1;
    for (auto& ev : normalized.events) {
      if (!ev.object.is_object()) continue;
      if (auto meta = ev.object.find("metadata"); meta != ev.object.end() && meta->is_object())
        meta->erase("managedFields");
      out.push_back(ledger::ingest::identityOf(ev.object).objectKey());
      out.push_back(stored && !value.projection.empty() ? value.projection
                                                        : ledger::ingest::projectObject(ev.object));
      out.push_back(stored ? value.storedObjectJson : ev.object.dump());
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (decode(input, false) != decode(input, true)) std::abort();
  return 0;
}
