// The expression tree: built by the parser, annotated in place by the
// checker (types, resolved overloads, variable slots, folded constants) and
// then walked read-only by the evaluator. This is DeviceSelector::Node.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "replay/cel/device_selector.h"
#include "replay/cel/types.h"
#include "replay/cel/value.h"

namespace ledger::cel {

struct Overload;
class Regex;

enum class NodeKind : std::uint8_t {
  kLiteral,        // `value` (pointing into `text`/`semver`/`items` when needed)
  kList,           // children are the elements
  kIdent,          // `name`; the checker turns locals into kLocal
  kLocal,          // a comprehension or cel.bind variable in `slot`
  kSelect,         // children[0].name
  kIndex,          // children[0][children[1]]
  kCall,           // `name`(children); receiver-style when `member`
  kAnd,            // children[0] && children[1]
  kOr,             // children[0] || children[1]
  kTernary,        // children[0] ? children[1] : children[2]
  kHas,            // has(children[0].name)
  kComprehension,  // `macro` over children[0] with variable `name` in `slot`
  kBind,           // cel.bind(name, children[0], children[1])
};

// Operators the evaluator implements generically rather than by overload.
enum class SpecialOp : std::uint8_t { kNone, kEquals, kNotEquals, kIn };

// The CEL macros that expand to comprehensions (cel-spec "Macros").
enum class Macro : std::uint8_t { kAll, kExists, kExistsOne, kMap, kFilter };

struct CompileError {
  std::uint32_t pos = 0;  // byte offset into the expression
  std::string message;
  // A cel-go issue (parse or type-check), reported with its position; false
  // for compile.go's own checks after env.Compile, whose detail is plain.
  bool celIssue = true;
};

using NodePtr = std::unique_ptr<DeviceSelector::Node>;

}  // namespace ledger::cel

struct ledger::cel::DeviceSelector::Node {
  NodeKind kind = NodeKind::kLiteral;
  std::uint32_t pos = 0;  // byte offset of the token that names this node
  int depth = 1;          // height of this subtree
  std::string name;
  std::vector<NodePtr> children;
  bool member = false;
  Macro macro = Macro::kAll;

  // Literal storage: `value` may point into these, so a literal node is never
  // moved once built (nodes live behind unique_ptr).
  Value value;
  std::string text;
  Semver semver;
  std::vector<Value> items;

  // Filled in by the checker.
  Type type;
  std::vector<const Overload*> overloads;  // candidates; one unless dispatch
  bool dispatch = false;                   // pick an overload by runtime kinds
  SpecialOp op = SpecialOp::kNone;
  int slot = -1;                       // variable slot (kLocal, macros)
  std::shared_ptr<const Regex> regex;  // precompiled constant pattern
};
