#include "replay/cel/types.h"

namespace ledger::cel {
namespace {
const Type& dynType() {
  static const Type kDyn;
  return kDyn;
}
}  // namespace

Type Type::list(const Type& elem) {
  Type t(TypeKind::kList);
  t.elem_ = std::make_shared<const Type>(elem);
  return t;
}

Type Type::map(const Type& key, const Type& value) {
  Type t(TypeKind::kMap);
  t.key_ = std::make_shared<const Type>(key);
  t.elem_ = std::make_shared<const Type>(value);
  return t;
}

const Type& Type::elem() const { return elem_ ? *elem_ : dynType(); }
const Type& Type::key() const { return key_ ? *key_ : dynType(); }

std::string Type::name() const {
  switch (kind_) {
    case TypeKind::kDyn:
      return "dyn";
    case TypeKind::kNull:
      return "null_type";
    case TypeKind::kBool:
      return "bool";
    case TypeKind::kInt:
      return "int";
    case TypeKind::kUint:
      return "uint";
    case TypeKind::kDouble:
      return "double";
    case TypeKind::kString:
      return "string";
    case TypeKind::kBytes:
      return "bytes";
    case TypeKind::kQuantity:
      return "kubernetes.Quantity";
    case TypeKind::kSemver:
      return "kubernetes.Semver";
    case TypeKind::kList:
      return "list(" + elem().name() + ")";
    case TypeKind::kMap:
      return "map(" + key().name() + ", " + elem().name() + ")";
    case TypeKind::kDevice:
      return "kubernetes.DRADevice";
  }
  return "?";
}

bool compatible(const Type& a, const Type& b) {
  if (a.isDyn() || b.isDyn()) return true;
  if (a.kind() != b.kind()) return false;
  if (a.kind() == TypeKind::kList) return compatible(a.elem(), b.elem());
  if (a.kind() == TypeKind::kMap)
    return compatible(a.key(), b.key()) && compatible(a.elem(), b.elem());
  return true;
}

Type join(const Type& a, const Type& b) {
  if (a.isDyn() || b.isDyn() || a.kind() != b.kind()) return Type();
  if (a.kind() == TypeKind::kList) return Type::list(join(a.elem(), b.elem()));
  if (a.kind() == TypeKind::kMap)
    return Type::map(join(a.key(), b.key()), join(a.elem(), b.elem()));
  return a;
}

}  // namespace ledger::cel
