// Overload table and implementations. Error texts follow cel-go and the
// Kubernetes libraries so messages read like the API server's.
#include "replay/cel/functions.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "replay/cel/regex.h"
#include "replay/cel/semver.h"

namespace ledger::cel {
namespace {

using Node = DeviceSelector::Node;
using T = TypeKind;

std::vector<Overload> buildTable() {
  std::vector<Overload> t;
  const auto global = [&](std::string_view name, std::initializer_list<T> params, T result, Fn fn) {
    Overload o{name, false, static_cast<std::uint8_t>(params.size()), {}, result, fn};
    std::copy(params.begin(), params.end(), o.params.begin());
    t.push_back(o);
  };
  const auto member = [&](std::string_view name, std::initializer_list<T> params, T result, Fn fn) {
    global(name, params, result, fn);
    t.back().member = true;
  };
  // Arithmetic (cel-spec "Arithmetic"): no implicit conversions.
  for (T k : {T::kInt, T::kUint, T::kDouble}) {
    global("_+_", {k, k}, k, Fn::kAdd);
    global("_-_", {k, k}, k, Fn::kSub);
    global("_*_", {k, k}, k, Fn::kMul);
    global("_/_", {k, k}, k, Fn::kDiv);
    if (k != T::kDouble) global("_%_", {k, k}, k, Fn::kMod);
    if (k != T::kUint) global("-_", {k}, k, Fn::kNeg);
  }
  global("_+_", {T::kString, T::kString}, T::kString, Fn::kAdd);
  global("_+_", {T::kList, T::kList}, T::kList, Fn::kAdd);
  global("!_", {T::kBool}, T::kBool, Fn::kNot);
  // Ordering; Kubernetes enables cel.CrossTypeNumericComparisons.
  const std::pair<std::string_view, Fn> kOrdering[] = {
      {"_<_", Fn::kLess}, {"_<=_", Fn::kLessEq}, {"_>_", Fn::kGreater}, {"_>=_", Fn::kGreaterEq}};
  for (const auto& [name, fn] : kOrdering) {
    for (T a : {T::kInt, T::kUint, T::kDouble}) {
      for (T b : {T::kInt, T::kUint, T::kDouble}) global(name, {a, b}, T::kBool, fn);
    }
    global(name, {T::kString, T::kString}, T::kBool, fn);
    global(name, {T::kBool, T::kBool}, T::kBool, fn);
  }
  for (T k : {T::kString, T::kList, T::kMap}) {
    global("size", {k}, T::kInt, Fn::kSize);
    member("size", {k}, T::kInt, Fn::kSize);
  }
  // Strings (standard library and ext.Strings).
  member("startsWith", {T::kString, T::kString}, T::kBool, Fn::kStartsWith);
  member("endsWith", {T::kString, T::kString}, T::kBool, Fn::kEndsWith);
  member("contains", {T::kString, T::kString}, T::kBool, Fn::kContains);
  member("matches", {T::kString, T::kString}, T::kBool, Fn::kMatches);
  global("matches", {T::kString, T::kString}, T::kBool, Fn::kMatches);
  member("lowerAscii", {T::kString}, T::kString, Fn::kLowerAscii);
  member("upperAscii", {T::kString}, T::kString, Fn::kUpperAscii);
  // Conversions.
  for (T k : {T::kInt, T::kUint, T::kDouble, T::kString}) {
    global("int", {k}, T::kInt, Fn::kToInt);
    global("uint", {k}, T::kUint, Fn::kToUint);
    global("double", {k}, T::kDouble, Fn::kToDouble);
  }
  for (T k : {T::kInt, T::kUint, T::kBool, T::kString})
    global("string", {k}, T::kString, Fn::kToString);
  // k8s.io/apiserver/pkg/cel/library/quantity.go
  global("quantity", {T::kString}, T::kQuantity, Fn::kQuantity);
  global("isQuantity", {T::kString}, T::kBool, Fn::kIsQuantity);
  global("sign", {T::kQuantity}, T::kInt, Fn::kQuantitySign);
  member("isGreaterThan", {T::kQuantity, T::kQuantity}, T::kBool, Fn::kQuantityGreater);
  member("isLessThan", {T::kQuantity, T::kQuantity}, T::kBool, Fn::kQuantityLess);
  member("compareTo", {T::kQuantity, T::kQuantity}, T::kInt, Fn::kQuantityCompare);
  member("add", {T::kQuantity, T::kQuantity}, T::kQuantity, Fn::kQuantityAdd);
  member("add", {T::kQuantity, T::kInt}, T::kQuantity, Fn::kQuantityAdd);
  member("sub", {T::kQuantity, T::kQuantity}, T::kQuantity, Fn::kQuantitySub);
  member("sub", {T::kQuantity, T::kInt}, T::kQuantity, Fn::kQuantitySub);
  member("asInteger", {T::kQuantity}, T::kInt, Fn::kQuantityAsInteger);
  member("isInteger", {T::kQuantity}, T::kBool, Fn::kQuantityIsInteger);
  member("asApproximateFloat", {T::kQuantity}, T::kDouble, Fn::kQuantityAsFloat);
  // k8s.io/apiserver/pkg/cel/library/semverlib.go (SemverVersion(1)).
  global("semver", {T::kString}, T::kSemver, Fn::kSemver);
  global("semver", {T::kString, T::kBool}, T::kSemver, Fn::kSemver);
  global("isSemver", {T::kString}, T::kBool, Fn::kIsSemver);
  global("isSemver", {T::kString, T::kBool}, T::kBool, Fn::kIsSemver);
  member("isGreaterThan", {T::kSemver, T::kSemver}, T::kBool, Fn::kSemverGreater);
  member("isLessThan", {T::kSemver, T::kSemver}, T::kBool, Fn::kSemverLess);
  member("compareTo", {T::kSemver, T::kSemver}, T::kInt, Fn::kSemverCompare);
  member("major", {T::kSemver}, T::kInt, Fn::kSemverMajor);
  member("minor", {T::kSemver}, T::kInt, Fn::kSemverMinor);
  member("patch", {T::kSemver}, T::kInt, Fn::kSemverPatch);
  // dynamic-resource-allocation/cel: "dra_includes_dyn_dyn".
  member("includes", {T::kDyn, T::kDyn}, T::kBool, Fn::kIncludes);
  return t;
}

bool kindFits(T param, ValueKind v) {
  switch (param) {
    case T::kDyn:
      return true;
    case T::kNull:
      return v == ValueKind::kNull;
    case T::kBool:
      return v == ValueKind::kBool;
    case T::kInt:
      return v == ValueKind::kInt;
    case T::kUint:
      return v == ValueKind::kUint;
    case T::kDouble:
      return v == ValueKind::kDouble;
    case T::kString:
      return v == ValueKind::kString;
    case T::kQuantity:
      return v == ValueKind::kQuantity;
    case T::kSemver:
      return v == ValueKind::kSemver;
    case T::kList:
      return v == ValueKind::kList;
    case T::kMap:
      return v == ValueKind::kMap;
    case T::kDevice:
      return v == ValueKind::kDevice;
    case T::kBytes:
      return false;
  }
  return false;
}

Value arithmetic(Fn fn, const Value& a, const Value& b, EvalContext& ctx) {
  if (a.kind == ValueKind::kDouble) {
    switch (fn) {
      case Fn::kAdd:
        return Value::dbl(a.d + b.d);
      case Fn::kSub:
        return Value::dbl(a.d - b.d);
      case Fn::kMul:
        return Value::dbl(a.d * b.d);
      default:
        return Value::dbl(a.d / b.d);  // IEEE: x/0 is +-Inf or NaN
    }
  }
  if (a.kind == ValueKind::kUint) {
    std::uint64_t r = 0;
    bool overflow = false;
    switch (fn) {
      case Fn::kAdd:
        overflow = __builtin_add_overflow(a.u, b.u, &r);
        break;
      case Fn::kSub:
        overflow = __builtin_sub_overflow(a.u, b.u, &r);
        break;
      case Fn::kMul:
        overflow = __builtin_mul_overflow(a.u, b.u, &r);
        break;
      case Fn::kDiv:
        if (b.u == 0) return ctx.error("division by zero");
        r = a.u / b.u;
        break;
      default:
        if (b.u == 0) return ctx.error("modulus by zero");
        r = a.u % b.u;
    }
    return overflow ? ctx.error("unsigned integer overflow") : Value::unsignedInt(r);
  }
  std::int64_t r = 0;
  bool overflow = false;
  switch (fn) {
    case Fn::kAdd:
      overflow = __builtin_add_overflow(a.i, b.i, &r);
      break;
    case Fn::kSub:
      overflow = __builtin_sub_overflow(a.i, b.i, &r);
      break;
    case Fn::kMul:
      overflow = __builtin_mul_overflow(a.i, b.i, &r);
      break;
    case Fn::kDiv:
    case Fn::kMod:
      if (b.i == 0) return ctx.error(fn == Fn::kDiv ? "division by zero" : "modulus by zero");
      if (a.i == std::numeric_limits<std::int64_t>::min() && b.i == -1) {
        overflow = true;
        break;
      }
      r = fn == Fn::kDiv ? a.i / b.i : a.i % b.i;
      break;
    default:
      break;
  }
  return overflow ? ctx.error("integer overflow") : Value::integer(r);
}

Value concat(const Value& a, const Value& b, EvalContext& ctx) {
  if (a.kind == ValueKind::kString) {
    ctx.charge(1 + (a.str.size() + b.str.size()) / 10);
    std::string joined;
    joined.reserve(a.str.size() + b.str.size());
    joined.append(a.str).append(b.str);
    return Value::string(ctx.keep(std::move(joined)));
  }
  ctx.charge(1 + (a.list->size() + b.list->size()) / 10);
  std::vector<Value>* list = ctx.newList();
  list->reserve(a.list->size() + b.list->size());
  list->insert(list->end(), a.list->begin(), a.list->end());
  list->insert(list->end(), b.list->begin(), b.list->end());
  return Value::ofList(list);
}

std::int64_t mapSize(const Value& m) {
  if (m.map == nullptr) return 0;
  switch (m.mapKind) {
    case MapKind::kAttributeDomains:
      return static_cast<std::int64_t>(static_cast<const AttributeDomains*>(m.map)->size());
    case MapKind::kAttributes:
      return static_cast<std::int64_t>(static_cast<const AttributeMap*>(m.map)->size());
    case MapKind::kCapacityDomains:
      return static_cast<std::int64_t>(static_cast<const CapacityDomains*>(m.map)->size());
    case MapKind::kCapacities:
      return static_cast<std::int64_t>(static_cast<const CapacityMap*>(m.map)->size());
  }
  return 0;
}

Value matches(const Value& text, const Value& pattern, const Node& call, EvalContext& ctx) {
  // A literal pattern was compiled once by the checker; others on each call,
  // where an invalid one is an evaluation error (cel-go String.Match).
  std::shared_ptr<const Regex> compiled = call.regex;
  if (!compiled) {
    std::string error;
    compiled = Regex::compile(pattern.str, error);
    if (!compiled) return ctx.error(std::move(error));
  }
  // cel-go's runtime cost for matches (interpreter/runtimecost.go): the text
  // length plus one times 0.1, times the pattern length times 0.25, each
  // rounded up. RE2 runs in time linear in the text.
  const std::uint64_t textCost = (text.str.size() + 1 + 9) / 10;
  const std::uint64_t patternCost = (pattern.str.size() + 3) / 4;
  if (!ctx.charge(textCost * patternCost)) {
    return Value::boolean(false);  // abandoned by the cost limit anyway
  }
  return Value::boolean(compiled->search(text.str));
}

Value convert(Fn fn, const Value& v, EvalContext& ctx) {
  const auto rangeError = [&](std::string_view to) {
    return ctx.error("range error converting " + std::string(typeName(v)) + " to " +
                     std::string(to));
  };
  const auto parseError = [&](std::string_view to) {
    return ctx.error("type conversion error from 'string' to '" + std::string(to) + "'");
  };
  switch (fn) {
    case Fn::kToInt:
      switch (v.kind) {
        case ValueKind::kInt:
          return v;
        case ValueKind::kUint:
          if (v.u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return rangeError("int");
          return Value::integer(static_cast<std::int64_t>(v.u));
        case ValueKind::kDouble:
          if (!(v.d > -9223372036854775808.0 && v.d < 9223372036854775808.0))
            return rangeError("int");
          return Value::integer(static_cast<std::int64_t>(v.d));
        default: {
          std::int64_t r = 0;
          const auto [end, ec] = std::from_chars(v.str.data(), v.str.data() + v.str.size(), r);
          if (v.str.empty() || ec != std::errc() || end != v.str.data() + v.str.size())
            return parseError("int");
          return Value::integer(r);
        }
      }
    case Fn::kToUint:
      switch (v.kind) {
        case ValueKind::kUint:
          return v;
        case ValueKind::kInt:
          if (v.i < 0) return rangeError("uint");
          return Value::unsignedInt(static_cast<std::uint64_t>(v.i));
        case ValueKind::kDouble:
          if (!(v.d > -1.0 && v.d < 18446744073709551616.0)) return rangeError("uint");
          return Value::unsignedInt(static_cast<std::uint64_t>(v.d));
        default: {
          std::uint64_t r = 0;
          const auto [end, ec] = std::from_chars(v.str.data(), v.str.data() + v.str.size(), r);
          if (v.str.empty() || ec != std::errc() || end != v.str.data() + v.str.size())
            return parseError("uint");
          return Value::unsignedInt(r);
        }
      }
    case Fn::kToDouble:
      switch (v.kind) {
        case ValueKind::kDouble:
          return v;
        case ValueKind::kInt:
          return Value::dbl(static_cast<double>(v.i));
        case ValueKind::kUint:
          return Value::dbl(static_cast<double>(v.u));
        default: {
          double r = 0;
          const auto [end, ec] = std::from_chars(v.str.data(), v.str.data() + v.str.size(), r);
          if (v.str.empty() || ec != std::errc() || end != v.str.data() + v.str.size())
            return parseError("double");
          return Value::dbl(r);
        }
      }
    default:
      switch (v.kind) {
        case ValueKind::kString:
          return v;
        case ValueKind::kBool:
          return Value::string(v.b ? "true" : "false");
        case ValueKind::kInt:
          return Value::string(ctx.keep(std::to_string(v.i)));
        default:
          return Value::string(ctx.keep(std::to_string(v.u)));
      }
  }
}

Value quantityArithmetic(Fn fn, const Value& a, const Value& b, EvalContext& ctx) {
  // quantity_add_int / quantity_sub_int: the int becomes a DecimalExponent
  // quantity (resource.NewQuantity(v, DecimalExponent)) before Add/Sub.
  const Quantity other = b.kind == ValueKind::kInt
                             ? Quantity::fromInt(b.i, Quantity::Format::kDecimalExponent)
                             : b.quantity;
  try {
    return Value::ofQuantity(fn == Fn::kQuantityAdd ? a.quantity + other : a.quantity - other);
  } catch (const std::overflow_error&) {
    return ctx.error("quantity arithmetic overflow");
  }
}

Value semverFunction(Fn fn, const Value* args, std::uint8_t arity, EvalContext& ctx) {
  const bool normalize = arity == 2 && args[1].b;
  std::string error;
  std::optional<Semver> v =
      normalize ? parseSemverNormalized(args[0].str, error) : parseSemver(args[0].str, error);
  if (fn == Fn::kIsSemver) return Value::boolean(v.has_value());
  if (!v) return ctx.error(error);
  return Value::ofSemver(ctx.keep(std::move(*v)));
}

Value includes(const Value& target, const Value& arg, EvalContext& ctx) {
  if (target.kind != ValueKind::kList) {
    Value same = equals(target, arg, ctx);
    return same.isError() ? Value::boolean(false) : same;
  }
  for (const Value& item : *target.list) {
    Value same = equals(item, arg, ctx);
    if (!same.isError() && same.b) return same;
  }
  return Value::boolean(false);
}

}  // namespace

std::span<const Overload> allOverloads() {
  static const std::vector<Overload> kTable = buildTable();
  return kTable;
}

bool accepts(const Overload& overload, const Value* args) {
  for (std::uint8_t i = 0; i < overload.arity; ++i) {
    if (!kindFits(overload.params[i], args[i].kind)) return false;
  }
  return true;
}

Value invoke(const Overload& o, const Value* args, const Node& call, EvalContext& ctx) {
  const Value& a = args[0];
  const Value& b = args[1];
  switch (o.fn) {
    case Fn::kAdd:
      if (a.kind == ValueKind::kString || a.kind == ValueKind::kList) return concat(a, b, ctx);
      return arithmetic(o.fn, a, b, ctx);
    case Fn::kSub:
    case Fn::kMul:
    case Fn::kDiv:
    case Fn::kMod:
      return arithmetic(o.fn, a, b, ctx);
    case Fn::kNeg:
      if (a.kind == ValueKind::kDouble) return Value::dbl(-a.d);
      if (a.i == std::numeric_limits<std::int64_t>::min()) return ctx.error("integer overflow");
      return Value::integer(-a.i);
    case Fn::kNot:
      return Value::boolean(!a.b);
    case Fn::kLess:
    case Fn::kLessEq:
    case Fn::kGreater:
    case Fn::kGreaterEq: {
      const std::optional<std::partial_ordering> c = order(a, b);
      if (!c) return ctx.error("no such overload");
      switch (o.fn) {
        case Fn::kLess:
          return Value::boolean(*c < 0);
        case Fn::kLessEq:
          return Value::boolean(*c <= 0);
        case Fn::kGreater:
          return Value::boolean(*c > 0);
        default:
          return Value::boolean(*c >= 0);
      }
    }
    case Fn::kSize:
      if (a.kind == ValueKind::kString) return Value::integer(codePoints(a.str));
      if (a.kind == ValueKind::kList)
        return Value::integer(static_cast<std::int64_t>(a.list->size()));
      return Value::integer(mapSize(a));
    case Fn::kStartsWith:
      return Value::boolean(a.str.starts_with(b.str));
    case Fn::kEndsWith:
      return Value::boolean(a.str.ends_with(b.str));
    case Fn::kContains:
      ctx.charge(1 + a.str.size() / 10);
      return Value::boolean(a.str.find(b.str) != std::string_view::npos);
    case Fn::kMatches:
      return matches(a, b, call, ctx);
    case Fn::kLowerAscii:
    case Fn::kUpperAscii: {
      ctx.charge(1 + a.str.size() / 10);
      std::string s(a.str);
      for (char& c : s) {
        if (o.fn == Fn::kLowerAscii && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (o.fn == Fn::kUpperAscii && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      }
      return Value::string(ctx.keep(std::move(s)));
    }
    case Fn::kToInt:
    case Fn::kToUint:
    case Fn::kToDouble:
    case Fn::kToString:
      return convert(o.fn, a, ctx);
    case Fn::kQuantity: {
      if (std::optional<Quantity> q = Quantity::tryParse(a.str)) return Value::ofQuantity(*q);
      try {
        Quantity::parse(a.str);
      } catch (const std::invalid_argument& e) {
        return ctx.error(e.what());
      }
      return ctx.error("invalid quantity");
    }
    case Fn::kIsQuantity:
      return Value::boolean(Quantity::tryParse(a.str).has_value());
    case Fn::kQuantitySign:
      return Value::integer(a.quantity.isZero() ? 0 : (a.quantity.isNegative() ? -1 : 1));
    case Fn::kQuantityCompare:
      return Value::integer(a.quantity < b.quantity ? -1 : (a.quantity == b.quantity ? 0 : 1));
    case Fn::kQuantityGreater:
      return Value::boolean(a.quantity > b.quantity);
    case Fn::kQuantityLess:
      return Value::boolean(a.quantity < b.quantity);
    case Fn::kQuantityAdd:
    case Fn::kQuantitySub:
      return quantityArithmetic(o.fn, a, b, ctx);
    case Fn::kQuantityAsInteger: {
      // Quantity.AsInt64 (see device_selector.h on representation-dependent cases).
      if (std::optional<std::int64_t> v = a.quantity.toInt64()) return Value::integer(*v);
      return ctx.error("cannot convert value to integer");
    }
    case Fn::kQuantityIsInteger:
      return Value::boolean(a.quantity.toInt64().has_value());
    case Fn::kQuantityAsFloat:
      return Value::dbl(static_cast<double>(a.quantity.nanos()) / 1e9);
    case Fn::kSemver:
    case Fn::kIsSemver:
      return semverFunction(o.fn, args, o.arity, ctx);
    case Fn::kSemverCompare:
      return Value::integer(compareSemver(*a.semver, *b.semver));
    case Fn::kSemverGreater:
      return Value::boolean(compareSemver(*a.semver, *b.semver) > 0);
    case Fn::kSemverLess:
      return Value::boolean(compareSemver(*a.semver, *b.semver) < 0);
    case Fn::kSemverMajor:
      return Value::integer(a.semver->major);
    case Fn::kSemverMinor:
      return Value::integer(a.semver->minor);
    case Fn::kSemverPatch:
      return Value::integer(a.semver->patch);
    case Fn::kIncludes:
      return includes(a, b, ctx);
  }
  return ctx.error("no such overload");
}

}  // namespace ledger::cel
