// Recursive-descent parser for the CEL grammar (cel-spec langdef.md), with
// macro expansion of has(), all/exists/exists_one/map/filter and cel.bind.
#pragma once

#include <optional>
#include <string_view>

#include "replay/cel/ast.h"

namespace ledger::cel {

// Parses `source` into a tree, or reports the first syntax error. Nesting
// deeper than kMaxNestingDepth is an error, so neither this parser nor the
// passes after it can exhaust the stack.
NodePtr parse(std::string_view source, CompileError& error);

}  // namespace ledger::cel
