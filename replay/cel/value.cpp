#include "replay/cel/value.h"

#include <cmath>
#include <limits>

namespace ledger::cel {

Value EvalContext::error(std::string message) {
  strings_.push_back(std::make_unique<std::string>(std::move(message)));
  Value v;
  v.kind = ValueKind::kError;
  v.error = strings_.back().get();
  return v;
}

std::string_view EvalContext::keep(std::string text) {
  strings_.push_back(std::make_unique<std::string>(std::move(text)));
  return *strings_.back();
}

const Semver* EvalContext::keep(Semver semver) {
  semvers_.push_back(std::make_unique<Semver>(std::move(semver)));
  return semvers_.back().get();
}

std::vector<Value>* EvalContext::newList() {
  lists_.push_back(std::make_unique<std::vector<Value>>());
  return lists_.back().get();
}

std::string_view typeName(const Value& v) {
  switch (v.kind) {
    case ValueKind::kError:
      return "error";
    case ValueKind::kNull:
      return "null_type";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kUint:
      return "uint";
    case ValueKind::kDouble:
      return "double";
    case ValueKind::kString:
      return "string";
    case ValueKind::kQuantity:
      return "kubernetes.Quantity";
    case ValueKind::kSemver:
      return "kubernetes.Semver";
    case ValueKind::kList:
      return "list";
    case ValueKind::kMap:
      return "map";
    case ValueKind::kDevice:
      return "kubernetes.DRADevice";
  }
  return "?";
}

std::int64_t codePoints(std::string_view s) {
  std::int64_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

namespace {

bool isNumber(ValueKind k) {
  return k == ValueKind::kInt || k == ValueKind::kUint || k == ValueKind::kDouble;
}

// Orders two numbers of any CEL numeric kinds exactly: long double holds
// every int64 and uint64 without rounding on the platforms we build for.
std::partial_ordering compareNumbers(const Value& a, const Value& b) {
  if (a.kind == b.kind) {
    switch (a.kind) {
      case ValueKind::kInt:
        return a.i <=> b.i;
      case ValueKind::kUint:
        return a.u <=> b.u;
      default:
        return a.d <=> b.d;
    }
  }
  if (a.kind == ValueKind::kInt && b.kind == ValueKind::kUint) {
    return a.i < 0 ? std::partial_ordering::less : static_cast<std::uint64_t>(a.i) <=> b.u;
  }
  if (a.kind == ValueKind::kUint && b.kind == ValueKind::kInt) {
    return b.i < 0 ? std::partial_ordering::greater : a.u <=> static_cast<std::uint64_t>(b.i);
  }
  const auto asLong = [](const Value& v) -> long double {
    switch (v.kind) {
      case ValueKind::kInt:
        return static_cast<long double>(v.i);
      case ValueKind::kUint:
        return static_cast<long double>(v.u);
      default:
        return static_cast<long double>(v.d);
    }
  };
  return asLong(a) <=> asLong(b);
}

Value attributeValue(const AttributeValue& a) {
  if (const bool* b = std::get_if<bool>(&a)) return Value::boolean(*b);
  if (const std::int64_t* i = std::get_if<std::int64_t>(&a)) return Value::integer(*i);
  if (const std::string* s = std::get_if<std::string>(&a)) return Value::string(*s);
  return Value::ofSemver(&std::get<Semver>(a));
}

template <typename Map, typename Convert>
Value mapsEqual(const Map* a, const Map* b, Convert convert, EvalContext& ctx) {
  const std::size_t sa = a ? a->size() : 0;
  const std::size_t sb = b ? b->size() : 0;
  if (sa != sb) return Value::boolean(false);
  if (sa == 0 || a == b) return Value::boolean(true);
  for (const auto& [key, value] : *a) {
    auto it = b->find(key);
    if (it == b->end()) return Value::boolean(false);
    Value same = equals(convert(value), convert(it->second), ctx);
    if (same.isError() || !same.b) return same;
  }
  return Value::boolean(true);
}

Value mapEquals(const Value& a, const Value& b, EvalContext& ctx) {
  if (a.mapKind != b.mapKind) {
    // Maps of different shapes are only equal when both are empty.
    const auto empty = [](const Value& v) {
      switch (v.mapKind) {
        case MapKind::kAttributeDomains:
          return !v.map || static_cast<const AttributeDomains*>(v.map)->empty();
        case MapKind::kAttributes:
          return !v.map || static_cast<const AttributeMap*>(v.map)->empty();
        case MapKind::kCapacityDomains:
          return !v.map || static_cast<const CapacityDomains*>(v.map)->empty();
        case MapKind::kCapacities:
          return !v.map || static_cast<const CapacityMap*>(v.map)->empty();
      }
      return false;
    };
    return Value::boolean(empty(a) && empty(b));
  }
  switch (a.mapKind) {
    case MapKind::kAttributes:
      return mapsEqual(static_cast<const AttributeMap*>(a.map),
                       static_cast<const AttributeMap*>(b.map), attributeValue, ctx);
    case MapKind::kCapacities:
      return mapsEqual(static_cast<const CapacityMap*>(a.map),
                       static_cast<const CapacityMap*>(b.map), Value::ofQuantity, ctx);
    case MapKind::kAttributeDomains:
      return mapsEqual(
          static_cast<const AttributeDomains*>(a.map), static_cast<const AttributeDomains*>(b.map),
          [](const AttributeMap& m) { return Value::ofMap(MapKind::kAttributes, &m); }, ctx);
    case MapKind::kCapacityDomains:
      return mapsEqual(
          static_cast<const CapacityDomains*>(a.map), static_cast<const CapacityDomains*>(b.map),
          [](const CapacityMap& m) { return Value::ofMap(MapKind::kCapacities, &m); }, ctx);
  }
  return Value::boolean(false);
}

}  // namespace

Value attributeToValue(const AttributeValue& a) { return attributeValue(a); }

Value equals(const Value& a, const Value& b, EvalContext& ctx) {
  if (a.isError()) return a;
  if (b.isError()) return b;
  if (isNumber(a.kind) && isNumber(b.kind)) {
    return Value::boolean(compareNumbers(a, b) == std::partial_ordering::equivalent);
  }
  if (a.kind != b.kind) {
    // apiserver/pkg/cel Quantity.Equal and Semver.Equal answer
    // MaybeNoSuchOverloadErr for a foreign operand; built-in types say false.
    if (a.kind == ValueKind::kQuantity || a.kind == ValueKind::kSemver) {
      return ctx.error("no such overload");
    }
    return Value::boolean(false);
  }
  switch (a.kind) {
    case ValueKind::kNull:
      return Value::boolean(true);
    case ValueKind::kBool:
      return Value::boolean(a.b == b.b);
    case ValueKind::kString:
      return Value::boolean(a.str == b.str);
    case ValueKind::kQuantity:
      return Value::boolean(a.quantity == b.quantity);
    case ValueKind::kSemver:
      return Value::boolean(compareSemver(*a.semver, *b.semver) == 0);
    case ValueKind::kDevice:
      return Value::boolean(true);
    case ValueKind::kMap:
      return mapEquals(a, b, ctx);
    case ValueKind::kList: {
      if (a.list->size() != b.list->size()) return Value::boolean(false);
      // cel-go: a definite false wins over an element error.
      Value result = Value::boolean(true);
      for (std::size_t i = 0; i < a.list->size(); ++i) {
        Value same = equals((*a.list)[i], (*b.list)[i], ctx);
        if (same.isError()) {
          result = same;
        } else if (!same.b) {
          return same;
        }
      }
      return result;
    }
    default:
      return Value::boolean(false);
  }
}

std::optional<std::partial_ordering> order(const Value& a, const Value& b) {
  if (isNumber(a.kind) && isNumber(b.kind)) return compareNumbers(a, b);
  if (a.kind != b.kind) return std::nullopt;
  if (a.kind == ValueKind::kString) return a.str <=> b.str;
  if (a.kind == ValueKind::kBool) return a.b <=> b.b;
  return std::nullopt;
}

}  // namespace ledger::cel
