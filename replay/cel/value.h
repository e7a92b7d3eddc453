// Runtime values of the evaluator and the per-evaluation scratch space.
//
// A Value is a small tagged union that never owns memory: strings, semvers
// and lists point into the device, into the compiled tree (constants), or
// into the EvalContext's arena (results computed during this evaluation).
// That keeps the common path (field lookups, comparisons) allocation-free.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "replay/cel/cel_limits.h"
#include "replay/cel/device_selector.h"
#include "schema/k8s/quantity.h"

namespace ledger::cel {

enum class ValueKind : std::uint8_t {
  kError,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kQuantity,
  kSemver,
  kList,
  kMap,
  kDevice,
};

// The four maps a selector can reach. A null pointer is an empty map (the
// default k8s hands out for an unknown domain).
enum class MapKind : std::uint8_t { kAttributeDomains, kAttributes, kCapacityDomains, kCapacities };

struct Value {
  ValueKind kind = ValueKind::kNull;
  MapKind mapKind = MapKind::kAttributes;
  union {
    bool b;
    std::int64_t i;
    std::uint64_t u;
    double d;
    const Semver* semver;
    const std::vector<Value>* list;
    const void* map;
    const std::string* error;
  };
  std::string_view str;  // kString
  Quantity quantity;     // kQuantity

  Value() : i(0) {}
  static Value null() { return Value(); }
  static Value boolean(bool v) {
    Value r;
    r.kind = ValueKind::kBool;
    r.b = v;
    return r;
  }
  static Value integer(std::int64_t v) {
    Value r;
    r.kind = ValueKind::kInt;
    r.i = v;
    return r;
  }
  static Value unsignedInt(std::uint64_t v) {
    Value r;
    r.kind = ValueKind::kUint;
    r.u = v;
    return r;
  }
  static Value dbl(double v) {
    Value r;
    r.kind = ValueKind::kDouble;
    r.d = v;
    return r;
  }
  static Value string(std::string_view v) {
    Value r;
    r.kind = ValueKind::kString;
    r.str = v;
    return r;
  }
  static Value ofQuantity(const Quantity& q) {
    Value r;
    r.kind = ValueKind::kQuantity;
    r.quantity = q;
    return r;
  }
  static Value ofSemver(const Semver* v) {
    Value r;
    r.kind = ValueKind::kSemver;
    r.semver = v;
    return r;
  }
  static Value ofList(const std::vector<Value>* v) {
    Value r;
    r.kind = ValueKind::kList;
    r.list = v;
    return r;
  }
  static Value ofMap(MapKind kind, const void* m) {
    Value r;
    r.kind = ValueKind::kMap;
    r.mapKind = kind;
    r.map = m;
    return r;
  }
  static Value device() {
    Value r;
    r.kind = ValueKind::kDevice;
    return r;
  }

  bool isError() const { return kind == ValueKind::kError; }
};

// The scratch space of one evaluation: everything computed here dies with it.
class EvalContext {
 public:
  explicit EvalContext(const Device& device) : device_(device) {}

  const Device& device() const { return device_; }

  Value error(std::string message);
  std::string_view keep(std::string text);
  const Semver* keep(Semver semver);
  std::vector<Value>* newList();

  // Cost accounting (resourceapi.CELSelectorExpressionMaxCost). Once over the
  // limit the evaluation is abandoned whatever the remaining operators would
  // absorb, as cel-go's cost tracker interrupts the program.
  bool charge(std::uint64_t units) {
    cost_ += units;
    if (cost_ > kMaxEvaluationCost) exhausted_ = true;
    return !exhausted_;
  }
  bool exhausted() const { return exhausted_; }

  std::array<Value, kMaxLocals> locals;

 private:
  const Device& device_;
  std::uint64_t cost_ = 0;
  bool exhausted_ = false;
  std::vector<std::unique_ptr<std::string>> strings_;
  std::vector<std::unique_ptr<Semver>> semvers_;
  std::vector<std::unique_ptr<std::vector<Value>>> lists_;
};

// An attribute as the selector sees it (strings and semvers by reference).
Value attributeToValue(const AttributeValue& a);

// CEL's runtime type name of a value ("int", "list", "kubernetes.Quantity").
std::string_view typeName(const Value& v);

// Heterogeneous equality (cel-spec "Equality"): numbers compare across
// int/uint/double, other kinds compare false when they differ, except that
// the Kubernetes types report "no such overload" when they are the left side
// (their Equal methods do). Returns a bool or error Value.
Value equals(const Value& a, const Value& b, EvalContext& ctx);

// Ordering for < <= > >=: numbers (across kinds), strings, bools. nullopt when
// the two are not ordered (different kinds, or NaN).
std::optional<std::partial_ordering> order(const Value& a, const Value& b);

// Number of code points in a UTF-8 string (CEL's size() of a string).
std::int64_t codePoints(std::string_view s);

}  // namespace ledger::cel
