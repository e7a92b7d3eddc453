// Static types for the checker: the part of CEL's type system that DRA
// selectors can reach. `dyn` is CEL's dynamic type; attribute values are dyn
// (k8s declares them AnyType/DynType), so most checks there move to runtime.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace ledger::cel {

enum class TypeKind : std::uint8_t {
  kDyn,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kQuantity,  // kubernetes.Quantity
  kSemver,    // kubernetes.Semver
  kList,
  kMap,
  kDevice,  // kubernetes.DRADevice, the type of `device`
};

class Type {
 public:
  Type() = default;  // dyn
  explicit Type(TypeKind kind) : kind_(kind) {}
  static Type list(const Type& elem);
  static Type map(const Type& key, const Type& value);

  TypeKind kind() const { return kind_; }
  bool isDyn() const { return kind_ == TypeKind::kDyn; }
  // List element or map value type (dyn when unknown).
  const Type& elem() const;
  // Map key type.
  const Type& key() const;

  // CEL's spelling: "int", "list(string)", "map(string, dyn)".
  std::string name() const;

 private:
  TypeKind kind_ = TypeKind::kDyn;
  std::shared_ptr<const Type> elem_;
  std::shared_ptr<const Type> key_;
};

// True when a value of type `b` may be used where `a` is expected or the
// other way round: equal types, or dyn anywhere in the structure.
bool compatible(const Type& a, const Type& b);
// The most specific type covering both, assuming compatible(a, b).
Type join(const Type& a, const Type& b);

}  // namespace ledger::cel
