// ledger-query findings --from TIME --to TIME --step DURATION: when audit
// findings opened and closed in a period, at the step's resolution, for the
// web view's time lines (serve's /ledger/v1/findings).
//
// One finding is a (type, object, message) in the state report, as
// tools/finding_events.h counts them: it opens in the first step whose end
// state has it and the previous step's end state did not, and closes in the
// first step whose end state lacks it. An event's `time` is the start of
// that step (the change happened in [time, time + step)); the findings open
// at --from are listed apart (`openAtFrom`), not as events. One fold from
// the checkpoint before --from to --to, and one report per step that holds
// records (a step without records changes nothing).
//
// JSON, or a table (-o table: one line per event). Throws UsageError on bad arguments (no
// --from/--to/--step, --to not after --from, more than kMaxFindingSteps steps), ReplayError on an
// unreadable ledger.
#pragma once

#include <cstdint>
#include <ostream>

#include "ledger/ledger.h"
#include "tools/query_commands.h"

namespace ledger::cli {

inline constexpr std::uint64_t kMaxFindingSteps = 5000;

int runFindingsTimeline(const Ledger& ledger, const QueryArgs& args, std::ostream& out);

}  // namespace ledger::cli
