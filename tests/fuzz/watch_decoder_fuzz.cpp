// libFuzzer target for the watch daemon's decoder (ingest/kube/
// watch_decoder.h): the input is split into lines as the informer splits a
// watch stream, and each line decoded and prepared for the ledger as the
// writer would. Aborts if an event is handed on whose object breaks the
// input limits (nested deeper than kMaxNestingDepth, a control character in
// an identity field); crashes, leaks and hangs are the sanitizers' to find.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ingest/ingester.h"
#include "ingest/input_limits.h"
#include "ingest/kube/watch_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  while (start <= input.size()) {
    std::size_t nl = input.find('\n', start);
    if (nl == std::string_view::npos) nl = input.size();
    auto line = ledger::kube::decodeWatchLine(input.substr(start, nl - start),
                                              "kueue.x-k8s.io/v1beta2", "Workload");
    for (auto& ev : line.events) {
      if (ledger::ingest::nestedDeeperThan(ev.object)) std::abort();
      if (ev.type != ledger::ingest::WatchEventType::kBookmark &&
          ev.type != ledger::ingest::WatchEventType::kError &&
          !ledger::ingest::objectProblem(ev.object).empty())
        std::abort();
      ledger::ingest::prepareEvent(std::move(ev));
    }
    start = nl + 1;
  }
  return 0;
}
