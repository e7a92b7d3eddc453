// Tree-walking evaluation with CEL's error semantics (cel-spec "Logical
// Operators", "Macros") and Kubernetes DRA's view of a device
// (dynamic-resource-allocation/cel/compile.go DeviceMatches).
#include "replay/cel/evaluator.h"

#include <array>
#include <string>

#include "replay/cel/functions.h"

namespace ledger::cel {
namespace {

using Node = DeviceSelector::Node;

// The helpers below are [[gnu::noinline]] where evaluate() would otherwise
// inline them: its own stack frame is paid on every node, so it stays small.

Value noSuchKey(std::string_view key, EvalContext& ctx) {
  return ctx.error("no such key: " + std::string(key));
}

// Map lookup. The outer attribute/capacity maps answer an empty map for an
// unknown domain, like k8s' newStringInterfaceMapWithDefault; the inner maps
// report "no such key" as cel-go does.
Value lookup(const Value& m, std::string_view key, EvalContext& ctx) {
  switch (m.mapKind) {
    case MapKind::kAttributeDomains: {
      const auto* domains = static_cast<const AttributeDomains*>(m.map);
      auto it = domains->find(key);
      return Value::ofMap(MapKind::kAttributes, it == domains->end() ? nullptr : &it->second);
    }
    case MapKind::kCapacityDomains: {
      const auto* domains = static_cast<const CapacityDomains*>(m.map);
      auto it = domains->find(key);
      return Value::ofMap(MapKind::kCapacities, it == domains->end() ? nullptr : &it->second);
    }
    case MapKind::kAttributes: {
      const auto* attrs = static_cast<const AttributeMap*>(m.map);
      if (attrs == nullptr) return noSuchKey(key, ctx);
      auto it = attrs->find(key);
      return it == attrs->end() ? noSuchKey(key, ctx) : attributeToValue(it->second);
    }
    case MapKind::kCapacities: {
      const auto* caps = static_cast<const CapacityMap*>(m.map);
      if (caps == nullptr) return noSuchKey(key, ctx);
      auto it = caps->find(key);
      return it == caps->end() ? noSuchKey(key, ctx) : Value::ofQuantity(it->second);
    }
  }
  return noSuchKey(key, ctx);
}

bool contains(const Value& m, std::string_view key) {
  if (m.map == nullptr) return false;
  switch (m.mapKind) {
    case MapKind::kAttributeDomains:
      return static_cast<const AttributeDomains*>(m.map)->contains(key);
    case MapKind::kCapacityDomains:
      return static_cast<const CapacityDomains*>(m.map)->contains(key);
    case MapKind::kAttributes:
      return static_cast<const AttributeMap*>(m.map)->contains(key);
    case MapKind::kCapacities:
      return static_cast<const CapacityMap*>(m.map)->contains(key);
  }
  return false;
}

template <typename Fn>
void forEachKey(const Value& m, Fn&& fn) {
  if (m.map == nullptr) return;
  const auto each = [&](const auto* map) {
    for (const auto& entry : *map) {
      if (!fn(Value::string(entry.first))) return;
    }
  };
  switch (m.mapKind) {
    case MapKind::kAttributeDomains:
      each(static_cast<const AttributeDomains*>(m.map));
      break;
    case MapKind::kCapacityDomains:
      each(static_cast<const CapacityDomains*>(m.map));
      break;
    case MapKind::kAttributes:
      each(static_cast<const AttributeMap*>(m.map));
      break;
    case MapKind::kCapacities:
      each(static_cast<const CapacityMap*>(m.map));
      break;
  }
}

[[gnu::noinline]] Value selectField(const Value& operand, const std::string& field,
                                    EvalContext& ctx) {
  if (operand.isError()) return operand;
  if (operand.kind == ValueKind::kMap) return lookup(operand, field, ctx);
  if (operand.kind == ValueKind::kDevice) {
    const Device& d = ctx.device();
    if (field == "driver") return Value::string(d.driver);
    if (field == "attributes") return Value::ofMap(MapKind::kAttributeDomains, &d.attributes);
    if (field == "capacity") return Value::ofMap(MapKind::kCapacityDomains, &d.capacity);
    if (field == "allowMultipleAllocations") return Value::boolean(d.allowMultipleAllocations);
    return ctx.error("no such field: " + field);
  }
  return ctx.error("type '" + std::string(typeName(operand)) +
                   "' does not support field selection");
}

[[gnu::noinline]] Value indexValue(const Value& operand, const Value& key, EvalContext& ctx) {
  if (operand.isError()) return operand;
  if (key.isError()) return key;
  if (operand.kind == ValueKind::kMap) {
    if (key.kind != ValueKind::kString)
      return ctx.error("unsupported key type: " + std::string(typeName(key)));
    return lookup(operand, key.str, ctx);
  }
  if (operand.kind == ValueKind::kList) {
    std::int64_t i = 0;
    if (key.kind == ValueKind::kInt) {
      i = key.i;
    } else if (key.kind == ValueKind::kUint && key.u <= static_cast<std::uint64_t>(INT64_MAX)) {
      i = static_cast<std::int64_t>(key.u);
    } else {
      return ctx.error("unsupported index type '" + std::string(typeName(key)) + "' in list");
    }
    const auto size = static_cast<std::int64_t>(operand.list->size());
    if (i < 0 || i >= size) {
      return ctx.error("index '" + std::to_string(i) + "' out of range in list size '" +
                       std::to_string(size) + "'");
    }
    return (*operand.list)[static_cast<std::size_t>(i)];
  }
  return ctx.error("no such overload: " + std::string(typeName(operand)) + "[" +
                   std::string(typeName(key)) + "]");
}

Value in(const Value& item, const Value& container, EvalContext& ctx) {
  if (item.isError()) return item;
  if (container.isError()) return container;
  if (container.kind == ValueKind::kMap) {
    return Value::boolean(item.kind == ValueKind::kString && contains(container, item.str));
  }
  if (container.kind == ValueKind::kList) {
    Value result = Value::boolean(false);
    for (const Value& element : *container.list) {
      Value same = equals(item, element, ctx);
      if (same.isError()) {
        result = same;
      } else if (same.b) {
        return same;
      }
    }
    return result;
  }
  return ctx.error("no such overload: " + std::string(typeName(item)) + " in " +
                   std::string(typeName(container)));
}

// The Go type name cel-go prints for a value that cannot be iterated.
std::string_view goTypeName(const Value& v) {
  switch (v.kind) {
    case ValueKind::kBool:
      return "types.Bool";
    case ValueKind::kInt:
      return "types.Int";
    case ValueKind::kUint:
      return "types.Uint";
    case ValueKind::kDouble:
      return "types.Double";
    case ValueKind::kString:
      return "types.String";
    case ValueKind::kNull:
      return "types.Null";
    case ValueKind::kSemver:
      return "cel.Semver";
    case ValueKind::kQuantity:
      return "cel.Quantity";
    default:
      return typeName(v);
  }
}

[[gnu::noinline]] Value logical(const Node& n, EvalContext& ctx) {
  // Commutative short-circuit: for &&, false wins over an error on either
  // side; for ||, true does.
  const bool isAnd = n.kind == NodeKind::kAnd;
  const Value left = evaluate(*n.children[0], ctx);
  if (left.kind == ValueKind::kBool && left.b != isAnd) return left;
  const Value right = evaluate(*n.children[1], ctx);
  if (right.kind == ValueKind::kBool && right.b != isAnd) return right;
  if (left.kind == ValueKind::kBool && right.kind == ValueKind::kBool) return right;
  if (left.isError()) return left;
  if (right.isError()) return right;
  return ctx.error(std::string("no such overload: ") + (isAnd ? "_&&_" : "_||_"));
}

[[gnu::noinline]] Value ternary(const Node& n, EvalContext& ctx) {
  const Value cond = evaluate(*n.children[0], ctx);
  if (cond.isError()) return cond;
  if (cond.kind != ValueKind::kBool) return ctx.error("no such overload: _?_:_");
  return evaluate(*n.children[cond.b ? 1 : 2], ctx);
}

[[gnu::noinline]] Value comprehension(const Node& n, EvalContext& ctx) {
  const Value range = evaluate(*n.children[0], ctx);
  if (range.isError()) return range;
  if (range.kind != ValueKind::kList && range.kind != ValueKind::kMap) {
    return ctx.error("got '" + std::string(goTypeName(range)) + "', expected iterable type");
  }
  Value& var = ctx.locals[static_cast<std::size_t>(n.slot)];
  const Node& body = *n.children[1];
  Value result;
  std::vector<Value>* out = nullptr;
  if (n.macro == Macro::kMap || n.macro == Macro::kFilter) {
    out = ctx.newList();
    result = Value::ofList(out);
  }
  std::int64_t count = 0;
  std::optional<Value> firstError;
  bool done = false;
  // Returns false to stop iterating.
  const auto step = [&](const Value& element) -> bool {
    if (ctx.exhausted()) return false;
    var = element;
    Value p = evaluate(body, ctx);
    const bool isBool = p.kind == ValueKind::kBool;
    switch (n.macro) {
      case Macro::kAll:
      case Macro::kExists: {
        const bool decisive = n.macro == Macro::kAll ? false : true;
        if (isBool && p.b == decisive) {
          result = p;
          done = true;
          return false;
        }
        if (!isBool && !firstError) firstError = p.isError() ? p : ctx.error("no such overload");
        return true;
      }
      case Macro::kExistsOne:
      case Macro::kFilter:
        if (!isBool) {
          result = p.isError() ? p : ctx.error("no such overload");
          done = true;
          return false;
        }
        if (p.b) {
          ++count;
          if (out) out->push_back(element);
        }
        return true;
      case Macro::kMap:
        if (n.children.size() == 3) {  // map(x, filter, transform)
          if (!isBool) {
            result = p.isError() ? p : ctx.error("no such overload");
            done = true;
            return false;
          }
          if (!p.b) return true;
          p = evaluate(*n.children[2], ctx);
        }
        if (p.isError()) {
          result = p;
          done = true;
          return false;
        }
        out->push_back(p);
        return true;
    }
    return true;
  };
  if (range.kind == ValueKind::kList) {
    for (const Value& element : *range.list) {
      if (!step(element)) break;
    }
  } else {
    forEachKey(range, step);
  }
  if (done) return result;
  switch (n.macro) {
    case Macro::kAll:
      return firstError ? *firstError : Value::boolean(true);
    case Macro::kExists:
      return firstError ? *firstError : Value::boolean(false);
    case Macro::kExistsOne:
      return Value::boolean(count == 1);
    default:
      return result;
  }
}

[[gnu::noinline]] Value call(const Node& n, EvalContext& ctx) {
  std::array<Value, 3> args;
  for (std::size_t i = 0; i < n.children.size(); ++i) {
    args[i] = evaluate(*n.children[i], ctx);
    if (args[i].isError()) return args[i];  // strict: the first error wins
  }
  switch (n.op) {
    case SpecialOp::kEquals:
      return equals(args[0], args[1], ctx);
    case SpecialOp::kNotEquals: {
      Value same = equals(args[0], args[1], ctx);
      return same.isError() ? same : Value::boolean(!same.b);
    }
    case SpecialOp::kIn:
      return in(args[0], args[1], ctx);
    case SpecialOp::kNone:
      break;
  }
  const Overload* chosen = n.overloads.front();
  if (n.dispatch) {
    chosen = nullptr;
    for (const Overload* o : n.overloads) {
      if (accepts(*o, args.data())) {
        chosen = o;
        break;
      }
    }
    if (chosen == nullptr) {
      std::string signature;
      for (std::size_t i = 0; i < n.children.size(); ++i) {
        signature += (i ? ", " : "") + std::string(typeName(args[i]));
      }
      return ctx.error("no such overload: " + n.name + "(" + signature + ")");
    }
  }
  return invoke(*chosen, args.data(), n, ctx);
}

[[gnu::noinline]] Value index(const Node& n, EvalContext& ctx) {
  const Value operand = evaluate(*n.children[0], ctx);
  return indexValue(operand, evaluate(*n.children[1], ctx), ctx);
}

[[gnu::noinline]] Value select(const Node& n, EvalContext& ctx) {
  return selectField(evaluate(*n.children[0], ctx), n.name, ctx);
}

[[gnu::noinline]] Value bind(const Node& n, EvalContext& ctx) {
  // Evaluated eagerly; an error only surfaces where the variable is used.
  ctx.locals[static_cast<std::size_t>(n.slot)] = evaluate(*n.children[0], ctx);
  return evaluate(*n.children[1], ctx);
}

[[gnu::noinline]] Value listLiteral(const Node& n, EvalContext& ctx) {
  std::vector<Value>* list = ctx.newList();
  list->reserve(n.children.size());
  for (const NodePtr& child : n.children) {
    Value v = evaluate(*child, ctx);
    if (v.isError()) return v;
    list->push_back(v);
  }
  return Value::ofList(list);
}

[[gnu::noinline]] Value has(const Node& n, EvalContext& ctx) {
  const Value operand = evaluate(*n.children[0], ctx);
  if (operand.isError()) return operand;
  if (operand.kind == ValueKind::kDevice) return Value::boolean(true);  // fields are always set
  if (operand.kind != ValueKind::kMap) return ctx.error("invalid type for field selection");
  // k8s' defaulting outer maps find every domain (Find never misses).
  if (operand.mapKind == MapKind::kAttributeDomains ||
      operand.mapKind == MapKind::kCapacityDomains) {
    return Value::boolean(true);
  }
  return Value::boolean(contains(operand, n.name));
}

const std::string& costExceeded() {
  static const std::string kMessage = "operation cancelled: actual cost limit exceeded";
  return kMessage;
}

}  // namespace

Value evaluate(const Node& n, EvalContext& ctx) {
  if (!ctx.charge(1)) {
    Value v;
    v.kind = ValueKind::kError;
    v.error = &costExceeded();
    return v;
  }
  switch (n.kind) {
    case NodeKind::kLiteral:
      return n.value;
    case NodeKind::kIdent:
      return Value::device();  // the checker allows only `device`
    case NodeKind::kLocal:
      return ctx.locals[static_cast<std::size_t>(n.slot)];
    case NodeKind::kList:
      return listLiteral(n, ctx);
    case NodeKind::kSelect:
      return select(n, ctx);
    case NodeKind::kIndex:
      return index(n, ctx);
    case NodeKind::kHas:
      return has(n, ctx);
    case NodeKind::kAnd:
    case NodeKind::kOr:
      return logical(n, ctx);
    case NodeKind::kTernary:
      return ternary(n, ctx);
    case NodeKind::kCall:
      return call(n, ctx);
    case NodeKind::kComprehension:
      return comprehension(n, ctx);
    case NodeKind::kBind:
      return bind(n, ctx);
  }
  return ctx.error("internal error: unknown node");
}

}  // namespace ledger::cel
