// Static checking as cel-go's checker does it for the DRA environment
// (dynamic-resource-allocation/cel/compile.go newCompiler): `device` is a
// kubernetes.DRADevice whose attributes are map(string, map(string, dyn)) and
// capacity map(string, map(string, kubernetes.Quantity)). Anything typed dyn
// is checked again at runtime.
#include "replay/cel/checker.h"

#include <algorithm>

#include "replay/cel/cel_limits.h"
#include "replay/cel/evaluator.h"
#include "replay/cel/functions.h"
#include "replay/cel/regex.h"

namespace ledger::cel {
namespace {

using Node = DeviceSelector::Node;

struct CheckError {
  CompileError error;
};

[[noreturn]] void failCheck(std::uint32_t pos, std::string message) {
  throw CheckError{CompileError{pos, std::move(message)}};
}

const Type& deviceFieldType(const std::string& field, std::uint32_t pos) {
  static const Type kString(TypeKind::kString);
  static const Type kBool(TypeKind::kBool);
  static const Type kAttributes =
      Type::map(Type(TypeKind::kString), Type::map(Type(TypeKind::kString), Type()));
  static const Type kCapacity = Type::map(
      Type(TypeKind::kString), Type::map(Type(TypeKind::kString), Type(TypeKind::kQuantity)));
  if (field == "driver") return kString;
  if (field == "allowMultipleAllocations") return kBool;
  if (field == "attributes") return kAttributes;
  if (field == "capacity") return kCapacity;
  failCheck(pos, "undefined field '" + field + "'");
}

bool isBoolish(const Type& t) { return t.isDyn() || t.kind() == TypeKind::kBool; }

// Whether an argument of static type `arg` may bind to parameter kind `param`.
bool fits(TypeKind param, const Type& arg) {
  return param == TypeKind::kDyn || arg.isDyn() || arg.kind() == param;
}

std::string signature(const Node& n) {
  std::string s;
  std::size_t first = 0;
  if (n.member) {
    s = n.children[0]->type.name() + ".";
    first = 1;
  }
  s += "(";
  for (std::size_t i = first; i < n.children.size(); ++i) {
    s += (i > first ? ", " : "") + n.children[i]->type.name();
  }
  return s + ")";
}

[[noreturn]] void noOverload(const Node& n) {
  failCheck(n.pos,
            "found no matching overload for '" + n.name + "' applied to '" + signature(n) + "'");
}

class Checker {
 public:
  void check(Node& n) {
    for (NodePtr& child : n.children) {
      // Comprehension bodies are checked with their variable in scope.
      if (n.kind == NodeKind::kComprehension && child != n.children.front()) break;
      if (n.kind == NodeKind::kBind && child != n.children.front()) break;
      check(*child);
    }
    switch (n.kind) {
      case NodeKind::kLiteral:
      case NodeKind::kLocal:
        break;
      case NodeKind::kList:
        list(n);
        break;
      case NodeKind::kIdent:
        ident(n);
        break;
      case NodeKind::kSelect:
        select(n);
        break;
      case NodeKind::kIndex:
        index(n);
        break;
      case NodeKind::kHas:
        has(n);
        break;
      case NodeKind::kAnd:
      case NodeKind::kOr:
        if (!isBoolish(n.children[0]->type) || !isBoolish(n.children[1]->type)) noOverload(n);
        n.type = Type(TypeKind::kBool);
        break;
      case NodeKind::kTernary: {
        const Type& a = n.children[1]->type;
        const Type& b = n.children[2]->type;
        if (!isBoolish(n.children[0]->type) || !compatible(a, b)) noOverload(n);
        n.type = join(a, b);
        break;
      }
      case NodeKind::kCall:
        call(n);
        break;
      case NodeKind::kComprehension:
        comprehension(n);
        break;
      case NodeKind::kBind:
        bind(n);
        break;
    }
  }

 private:
  struct Variable {
    std::string name;
    Type type;
  };

  void list(Node& n) {
    Type elem;
    bool first = true;
    bool constant = true;
    for (const NodePtr& child : n.children) {
      constant = constant && child->kind == NodeKind::kLiteral;
      if (first) {
        elem = child->type;
        first = false;
        continue;
      }
      // cel.HomogeneousAggregateLiterals: one element type per list literal.
      if (!compatible(elem, child->type)) {
        failCheck(child->pos,
                  "expected type '" + elem.name() + "' but found '" + child->type.name() + "'");
      }
      elem = join(elem, child->type);
    }
    n.type = Type::list(elem);
    if (constant) {
      // A constant list is built once; its elements keep pointing into the
      // (retained) child literals.
      for (const NodePtr& child : n.children) n.items.push_back(child->value);
      n.value = Value::ofList(&n.items);
      n.kind = NodeKind::kLiteral;
    }
  }

  void ident(Node& n) {
    for (std::size_t i = scope_.size(); i-- > 0;) {
      if (scope_[i].name == n.name) {
        n.kind = NodeKind::kLocal;
        n.slot = static_cast<int>(i);
        n.type = scope_[i].type;
        return;
      }
    }
    if (n.name != "device")
      failCheck(n.pos, "undeclared reference to '" + n.name + "' (in container '')");
    n.type = Type(TypeKind::kDevice);
  }

  void select(Node& n) {
    const Type& operand = n.children[0]->type;
    switch (operand.kind()) {
      case TypeKind::kDevice:
        n.type = deviceFieldType(n.name, n.pos);
        return;
      case TypeKind::kMap:
        if (!fits(operand.key().kind(), Type(TypeKind::kString))) noOverload(n);
        n.type = operand.elem();
        return;
      case TypeKind::kDyn:
        n.type = Type();
        return;
      default:
        failCheck(n.pos, "type '" + operand.name() + "' does not support field selection");
    }
  }

  void index(Node& n) {
    const Type& operand = n.children[0]->type;
    const Type& key = n.children[1]->type;
    if (operand.kind() == TypeKind::kList &&
        (fits(TypeKind::kInt, key) || key.kind() == TypeKind::kUint)) {
      n.type = operand.elem();
    } else if (operand.kind() == TypeKind::kMap && compatible(operand.key(), key)) {
      n.type = operand.elem();
    } else if (operand.isDyn()) {
      n.type = Type();
    } else {
      noOverload(n);
    }
  }

  void has(Node& n) {
    const Type& operand = n.children[0]->type;
    if (operand.kind() == TypeKind::kDevice) {
      deviceFieldType(n.name, n.pos);
    } else if (operand.kind() != TypeKind::kMap && !operand.isDyn()) {
      failCheck(n.pos, "invalid argument to has() macro: type '" + operand.name() +
                           "' does not support field selection");
    }
    n.type = Type(TypeKind::kBool);
  }

  void call(Node& n) {
    if (n.name == "_==_" || n.name == "_!=_") {
      if (!compatible(n.children[0]->type, n.children[1]->type)) noOverload(n);
      n.op = n.name == "_==_" ? SpecialOp::kEquals : SpecialOp::kNotEquals;
      n.type = Type(TypeKind::kBool);
      fold(n);
      return;
    }
    if (n.name == "@in") {
      const Type& item = n.children[0]->type;
      const Type& container = n.children[1]->type;
      const bool ok = container.isDyn() ||
                      (container.kind() == TypeKind::kList && compatible(item, container.elem())) ||
                      (container.kind() == TypeKind::kMap && compatible(item, container.key()));
      if (!ok) noOverload(n);
      n.op = SpecialOp::kIn;
      n.type = Type(TypeKind::kBool);
      fold(n);
      return;
    }
    bool known = false;
    for (const Overload& o : allOverloads()) {
      if (o.name != n.name) continue;
      known = true;
      if (o.member != n.member || o.arity != n.children.size()) continue;
      bool ok = true;
      for (std::size_t i = 0; i < n.children.size() && ok; ++i)
        ok = fits(o.params[i], n.children[i]->type);
      if (ok) n.overloads.push_back(&o);
    }
    if (!known) failCheck(n.pos, "undeclared reference to '" + n.name + "' (in container '')");
    if (n.overloads.empty()) noOverload(n);

    bool anyDyn = false;
    for (const NodePtr& child : n.children) anyDyn = anyDyn || child->type.isDyn();
    n.dispatch = n.overloads.size() > 1 || anyDyn;
    const TypeKind result = n.overloads.front()->result;
    const bool sameResult = std::all_of(n.overloads.begin(), n.overloads.end(),
                                        [&](const Overload* o) { return o->result == result; });
    if (!sameResult) {
      n.type = Type();
    } else if (result == TypeKind::kList) {
      if (!compatible(n.children[0]->type, n.children[1]->type)) noOverload(n);
      n.type = join(n.children[0]->type, n.children[1]->type);
    } else {
      n.type = Type(result);
    }
    // cel.ValidateRegexLiterals (Kubernetes' base environment enables it): a
    // constant pattern must compile, and is compiled only once.
    if (n.name == "matches" && n.children[1]->kind == NodeKind::kLiteral &&
        n.children[1]->value.kind == ValueKind::kString) {
      std::string error;
      n.regex = Regex::compile(n.children[1]->value.str, error);
      if (!n.regex) failCheck(n.children[1]->pos, "invalid matches argument");
    }
    fold(n);
  }

  // Evaluates a call whose arguments are all constants once, now. Failures
  // stay calls so the error (and CEL's absorption of it) happens at runtime.
  void fold(Node& n) {
    for (const NodePtr& child : n.children) {
      if (child->kind != NodeKind::kLiteral) return;
    }
    static const Device kNoDevice;
    EvalContext ctx(kNoDevice);
    const Value v = evaluate(n, ctx);
    switch (v.kind) {
      case ValueKind::kError:
      case ValueKind::kList:
      case ValueKind::kMap:
      case ValueKind::kDevice:
        return;
      case ValueKind::kString:
        n.text = std::string(v.str);
        n.value = Value::string(n.text);
        break;
      case ValueKind::kSemver:
        n.semver = *v.semver;
        n.value = Value::ofSemver(&n.semver);
        break;
      default:
        n.value = v;
    }
    n.kind = NodeKind::kLiteral;
  }

  void pushVariable(Node& n, const Type& type) {
    if (static_cast<int>(scope_.size()) >= kMaxLocals) {
      failCheck(n.pos, "too many nested comprehensions or bindings (limit " +
                           std::to_string(kMaxLocals) + ")");
    }
    n.slot = static_cast<int>(scope_.size());
    scope_.push_back(Variable{n.name, type});
  }

  void comprehension(Node& n) {
    const Type& range = n.children[0]->type;
    Type var;
    switch (range.kind()) {
      case TypeKind::kList:
        var = range.elem();
        break;
      case TypeKind::kMap:
        var = range.key();
        break;
      case TypeKind::kDyn:
        break;
      default:
        failCheck(n.children[0]->pos,
                  "expression of type '" + range.name() +
                      "' cannot be range of a comprehension (must be list, map, or dynamic)");
    }
    pushVariable(n, var);
    for (std::size_t i = 1; i < n.children.size(); ++i) check(*n.children[i]);
    scope_.pop_back();
    const bool transformLast = n.macro == Macro::kMap;
    for (std::size_t i = 1; i < n.children.size() - (transformLast ? 1 : 0); ++i) {
      if (!isBoolish(n.children[i]->type)) {
        failCheck(n.children[i]->pos,
                  "expected type 'bool' but found '" + n.children[i]->type.name() + "'");
      }
    }
    switch (n.macro) {
      case Macro::kMap:
        n.type = Type::list(n.children.back()->type);
        break;
      case Macro::kFilter:
        n.type = Type::list(var);
        break;
      default:
        n.type = Type(TypeKind::kBool);
    }
  }

  void bind(Node& n) {
    pushVariable(n, n.children[0]->type);
    check(*n.children[1]);
    scope_.pop_back();
    n.type = n.children[1]->type;
  }

  std::vector<Variable> scope_;
};

}  // namespace

bool check(Node& root, CompileError& error) {
  try {
    Checker().check(root);
  } catch (const CheckError& e) {
    error = e.error;
    return false;
  }
  // compile.go: "must evaluate to bool or the unknown type".
  if (!isBoolish(root.type)) {
    error =
        CompileError{root.pos, "must evaluate to bool or the unknown type, not " + root.type.name(),
                     /*celIssue=*/false};
    return false;
  }
  return true;
}

}  // namespace ledger::cel
