// Resource limits that keep hostile selectors cheap to reject and to run.
//
// Kubernetes bounds selectors by length (resourceapi.CELSelectorExpressionMaxLength)
// and by runtime cost (resourceapi.CELSelectorExpressionMaxCost); cel-go also
// bounds parser recursion. The depth limit here additionally guarantees that
// the recursive checker and evaluator never overflow the stack.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ledger::cel {

// resourceapi.CELSelectorExpressionMaxLength (10 Ki).
inline constexpr std::size_t kMaxExpressionBytes = 10 * 1024;
// Deepest allowed expression tree. Chains of && and || are balanced (as
// cel-go does), so long conjunctions do not count against it.
inline constexpr int kMaxNestingDepth = 100;
// resourceapi.CELSelectorExpressionMaxCost. Every evaluated node costs one
// unit; string, list and regex work cost in proportion to their size.
inline constexpr std::uint64_t kMaxEvaluationCost = 1'000'000;
// Nested comprehension / cel.bind variables in scope at once.
inline constexpr int kMaxLocals = 16;
// Regular expressions need no limit of their own: RE2 matches in time linear
// in the text and refuses a pattern whose program outgrows its memory budget
// (Go's regexp likewise reports "expression too large").

}  // namespace ledger::cel
