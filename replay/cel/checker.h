// Type-checks a parsed tree in place: resolves identifiers and overloads,
// assigns variable slots, precompiles constant regexes and folds constant
// calls, so evaluation does no name lookups or repeated parsing.
#pragma once

#include "replay/cel/ast.h"

namespace ledger::cel {

// False with `error` set when the expression is ill-typed or does not
// produce a bool (or dyn) result, as the DRA compiler requires.
bool check(DeviceSelector::Node& root, CompileError& error);

}  // namespace ledger::cel
