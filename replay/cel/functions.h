// The function and operator overloads a selector may call: CEL's standard
// operators, the string functions of cel-go's ext.Strings that DRA selectors
// use, and the Kubernetes quantity and semver libraries
// (k8s.io/apiserver/pkg/cel/library quantity.go, semverlib.go).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "replay/cel/ast.h"
#include "replay/cel/types.h"
#include "replay/cel/value.h"

namespace ledger::cel {

enum class Fn : std::uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kNeg,
  kNot,
  kLess,
  kLessEq,
  kGreater,
  kGreaterEq,
  kSize,
  kStartsWith,
  kEndsWith,
  kContains,
  kMatches,
  kLowerAscii,
  kUpperAscii,
  kToInt,
  kToUint,
  kToDouble,
  kToString,
  kQuantity,
  kIsQuantity,
  kQuantitySign,
  kQuantityCompare,
  kQuantityGreater,
  kQuantityLess,
  kQuantityAdd,
  kQuantitySub,
  kQuantityAsInteger,
  kQuantityIsInteger,
  kQuantityAsFloat,
  kSemver,
  kIsSemver,
  kSemverCompare,
  kSemverGreater,
  kSemverLess,
  kSemverMajor,
  kSemverMinor,
  kSemverPatch,
  kIncludes,
};

struct Overload {
  std::string_view name;
  bool member = false;               // receiver-style: the receiver is parameter 0
  std::uint8_t arity = 0;            // including the receiver
  std::array<TypeKind, 3> params{};  // kDyn accepts any value
  TypeKind result = TypeKind::kDyn;  // kList: the (joined) list argument type
  Fn fn = Fn::kAdd;
};

// Every overload, grouped by name.
std::span<const Overload> allOverloads();

// True when the runtime kinds of `args` fit the overload's parameters.
bool accepts(const Overload& overload, const Value* args);

// Runs one overload on already evaluated, non-error arguments.
Value invoke(const Overload& overload, const Value* args, const DeviceSelector::Node& call,
             EvalContext& ctx);

}  // namespace ledger::cel
