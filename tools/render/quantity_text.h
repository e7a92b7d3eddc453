// A mean level (a decimal string, replay::Integral::meanOver) as a table
// prints it for people: `80Gi`, `71.87Gi`, `2500m`, in the units the state
// report's quantities read in, instead of `77166245751.466666667`.
//
// For tables only: JSON and CSV keep the exact decimal. Pure function;
// thread-safe; never throws except std::bad_alloc.
#pragma once

#include <string>
#include <string_view>

namespace ledger::render {

// Byte resources (replay::isByteResource: memory, storage, *.memory) in the
// largest binary suffix (Ki..Ei) the value reaches, to two decimals, trailing
// zeros dropped; others rounded to a thousandth and written as Kubernetes
// writes a quantity (Quantity::toString: `2500m`, `3`). Text that is not a
// decimal comes back unchanged.
std::string humanMean(std::string_view meanDecimal, const std::string& resource);

}  // namespace ledger::render
