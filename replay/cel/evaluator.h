// Walks a checked expression tree against one device.
#pragma once

#include "replay/cel/ast.h"
#include "replay/cel/value.h"

namespace ledger::cel {

// Evaluates `node`. Errors are values (CEL's error semantics: && and || may
// absorb them); a spent cost budget is reported through ctx.exhausted().
Value evaluate(const DeviceSelector::Node& node, EvalContext& ctx);

}  // namespace ledger::cel
