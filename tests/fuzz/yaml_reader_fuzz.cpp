// libFuzzer target for ValueReader in YAML mode (the input is read after a
// `---` line, so the first byte never selects JSON): document framing, the
// alias budget and depth limit (yaml_json.h), YAML->JSON conversion, and
// normalisation and projection of what it gives. Aborts if a document is
// accepted that breaks the limits it was read under - nested deeper than
// kMaxNestingDepth, or larger once dumped than its expansion budget allows -
// and otherwise relies on the sanitizers for crashes, leaks and hangs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "ingest/ingester.h"
#include "ingest/input_limits.h"
#include "ingest/value_reader.h"
#include "ingest/watch_event.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::uint64_t kMaxValueBytes = 1 << 16;
  std::istringstream in("---\n" + std::string(reinterpret_cast<const char*>(data), size));
  ledger::ingest::ValueReader::Options options;
  options.maxValueBytes = kMaxValueBytes;
  ledger::ingest::ValueReader reader(in, options);
  ledger::ingest::DecodedValue value;
  while (reader.next(&value)) {
    if (!value.error.empty()) continue;
    if (ledger::ingest::nestedDeeperThan(value.value)) std::abort();
    // The budget counts a scalar's bytes plus one per node; a dump adds at
    // most quotes, escapes and separators, a few bytes per node or byte.
    if (value.value.dump().size() > 8 * kMaxValueBytes) std::abort();
    auto normalized = ledger::ingest::normalizeValue(std::move(value.value));
    for (auto& ev : normalized.events) ledger::ingest::prepareEvent(std::move(ev));
  }
  return 0;
}
