// Turns one line of a Kubernetes watch stream (?watch=1: one JSON watch
// event per line) into the events the daemon records. The informer hands it
// every line it receives; the fuzz target (tests/fuzz/watch_decoder_fuzz.cpp)
// feeds it arbitrary bytes.
//
// A line that cannot be recorded - not JSON, nested deeper than
// kMaxNestingDepth (checked on the text, before anything is parsed:
// input_limits.h), an object with no name or with a control character in its
// identity (watch_event.h) - is returned as rejected with the reason, so the
// daemon logs it, counts it and reads on: one hostile object from the API
// server never stops or crashes the watch.
//
// Pure function; thread-safe; never throws except std::bad_alloc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ingest/watch_event.h"

namespace ledger::kube {

struct WatchLine {
  std::string type;                        // the event's "type", as sent
  std::vector<ingest::WatchEvent> events;  // to record, in order
  std::vector<std::string> rejected;       // why the line (or its object) was skipped
  // An ERROR event: the watch is over. `expired`: it says the
  // resourceVersion is too old (410 Gone), so the resource is listed again.
  bool error = false;
  bool expired = false;
  std::string errorText;
};

// `apiVersion` and `kind` complete objects that lack them (a watch of a
// built-in kind sends them without).
WatchLine decodeWatchLine(std::string_view line, const std::string& apiVersion,
                          const std::string& kind);

}  // namespace ledger::kube
