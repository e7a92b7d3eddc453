// Precedence climbing over the grammar of cel-spec langdef.md:
//   Expr  = Or ["?" Or ":" Expr]        Or  = And {"||" And}
//   And   = Rel {"&&" Rel}              Rel = Add {relop Add}
//   Add   = Mul {("+"|"-") Mul}         Mul = Unary {("*"|"/"|"%") Unary}
//   Unary = {"!"|"-"} Member            Member = Primary {"." IDENT [args] | "[" Expr "]"}
// Binary chains are loops, so the only recursion is through nested
// sub-expressions, which is bounded by kMaxNestingDepth.
#include "replay/cel/parser.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include "replay/cel/cel_limits.h"
#include "replay/cel/lexer.h"

namespace ledger::cel {
namespace {

using Node = DeviceSelector::Node;

struct SyntaxError {
  CompileError error;
};

[[noreturn]] void failSyntax(std::uint32_t pos, std::string message) {
  throw SyntaxError{CompileError{pos, std::move(message)}};
}

bool isReserved(std::string_view name) {
  static constexpr std::array<std::string_view, 17> kReserved = {
      "as",  "break", "const",     "continue", "else",   "for", "function", "if",   "import",
      "let", "loop",  "namespace", "package",  "return", "var", "void",     "while"};
  return std::find(kReserved.begin(), kReserved.end(), name) != kReserved.end();
}

NodePtr makeNode(NodeKind kind, std::uint32_t pos, std::string name = {},
                 std::vector<NodePtr> children = {}) {
  auto node = std::make_unique<Node>();
  node->kind = kind;
  node->pos = pos;
  node->name = std::move(name);
  int depth = 0;
  for (const NodePtr& child : children) depth = std::max(depth, child->depth);
  node->depth = depth + 1;
  node->children = std::move(children);
  if (node->depth > kMaxNestingDepth) {
    failSyntax(
        pos, "expression nesting exceeds the maximum depth of " + std::to_string(kMaxNestingDepth));
  }
  return node;
}

NodePtr makeCall(std::string name, std::uint32_t pos, NodePtr a, NodePtr b = nullptr) {
  std::vector<NodePtr> args;
  args.push_back(std::move(a));
  if (b) args.push_back(std::move(b));
  return makeNode(NodeKind::kCall, pos, std::move(name), std::move(args));
}

class Parser {
 public:
  explicit Parser(std::string_view source) : lexer_(source) { advance(); }

  NodePtr parseAll() {
    NodePtr root = expr();
    if (tok_.kind != TokenKind::kEnd) unexpected();
    return root;
  }

 private:
  // Tracks recursion through expr(): every nested sub-expression passes here.
  struct Nesting {
    explicit Nesting(Parser& p) : parser(p) {
      if (++parser.nesting_ > kMaxNestingDepth) {
        failSyntax(parser.tok_.pos, "expression nesting exceeds the maximum depth of " +
                                        std::to_string(kMaxNestingDepth));
      }
    }
    ~Nesting() { --parser.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    Parser& parser;
  };

  void advance() {
    tok_ = lexer_.next();
    if (tok_.kind == TokenKind::kError) failSyntax(tok_.pos, tok_.value);
  }

  [[noreturn]] void unexpected() const {
    const std::string what =
        tok_.kind == TokenKind::kEnd ? "<EOF>" : "'" + std::string(tok_.text) + "'";
    failSyntax(tok_.pos, "Syntax error: mismatched input " + what);
  }

  void expect(TokenKind kind) {
    if (tok_.kind != kind) {
      // Appended, not '"'" + text': GCC 12 at -O3 warns on that operator+
      // (-Wrestrict, a false positive).
      std::string message = "Syntax error: mismatched input ";
      if (tok_.kind == TokenKind::kEnd) {
        message += "<EOF>";
      } else {
        message.append("'").append(tok_.text).append("'");
      }
      message.append(" expecting ").append(describe(kind));
      failSyntax(tok_.pos, message);
    }
    advance();
  }

  NodePtr expr() {
    Nesting nesting(*this);
    NodePtr cond = logical(TokenKind::kOr);
    if (tok_.kind != TokenKind::kQuestion) return cond;
    const std::uint32_t pos = tok_.pos;
    advance();
    NodePtr then = logical(TokenKind::kOr);
    expect(TokenKind::kColon);
    NodePtr otherwise = expr();
    std::vector<NodePtr> parts;
    parts.push_back(std::move(cond));
    parts.push_back(std::move(then));
    parts.push_back(std::move(otherwise));
    return makeNode(NodeKind::kTernary, pos, "_?_:_", std::move(parts));
  }

  // `||` over `&&` over relations. Like cel-go's balancer, a chain of the
  // same operator becomes a balanced tree, so a long conjunction stays shallow.
  NodePtr logical(TokenKind op) {
    std::vector<NodePtr> terms;
    std::vector<std::uint32_t> ops;
    terms.push_back(op == TokenKind::kOr ? logical(TokenKind::kAnd) : relation());
    while (tok_.kind == op) {
      ops.push_back(tok_.pos);
      advance();
      terms.push_back(op == TokenKind::kOr ? logical(TokenKind::kAnd) : relation());
    }
    return balance(op == TokenKind::kOr ? NodeKind::kOr : NodeKind::kAnd, terms, ops, 0,
                   terms.size() - 1);
  }

  NodePtr balance(NodeKind kind, std::vector<NodePtr>& terms, const std::vector<std::uint32_t>& ops,
                  std::size_t lo, std::size_t hi) {
    if (lo == hi) return std::move(terms[lo]);
    const std::size_t mid = (lo + hi) / 2;
    std::vector<NodePtr> pair;
    pair.push_back(balance(kind, terms, ops, lo, mid));
    pair.push_back(balance(kind, terms, ops, mid + 1, hi));
    return makeNode(kind, ops[mid], kind == NodeKind::kOr ? "_||_" : "_&&_", std::move(pair));
  }

  NodePtr relation() {
    NodePtr left = addition();
    for (;;) {
      const char* name = nullptr;
      switch (tok_.kind) {
        case TokenKind::kLess:
          name = "_<_";
          break;
        case TokenKind::kLessEq:
          name = "_<=_";
          break;
        case TokenKind::kGreater:
          name = "_>_";
          break;
        case TokenKind::kGreaterEq:
          name = "_>=_";
          break;
        case TokenKind::kEq:
          name = "_==_";
          break;
        case TokenKind::kNotEq:
          name = "_!=_";
          break;
        case TokenKind::kIn:
          name = "@in";
          break;
        default:
          return left;
      }
      const std::uint32_t pos = tok_.pos;
      advance();
      left = makeCall(name, pos, std::move(left), addition());
    }
  }

  NodePtr addition() {
    NodePtr left = multiplication();
    while (tok_.kind == TokenKind::kPlus || tok_.kind == TokenKind::kMinus) {
      const char* name = tok_.kind == TokenKind::kPlus ? "_+_" : "_-_";
      const std::uint32_t pos = tok_.pos;
      advance();
      left = makeCall(name, pos, std::move(left), multiplication());
    }
    return left;
  }

  NodePtr multiplication() {
    NodePtr left = unary();
    for (;;) {
      const char* name = nullptr;
      switch (tok_.kind) {
        case TokenKind::kStar:
          name = "_*_";
          break;
        case TokenKind::kSlash:
          name = "_/_";
          break;
        case TokenKind::kPercent:
          name = "_%_";
          break;
        default:
          return left;
      }
      const std::uint32_t pos = tok_.pos;
      advance();
      left = makeCall(name, pos, std::move(left), unary());
    }
  }

  NodePtr unary() {
    std::vector<std::pair<TokenKind, std::uint32_t>> ops;
    while (tok_.kind == TokenKind::kNot || tok_.kind == TokenKind::kMinus) {
      ops.emplace_back(tok_.kind, tok_.pos);
      advance();
    }
    // "-1" is a literal, not a negation (INT_LIT ::= -? DIGIT+), which is how
    // -9223372036854775808 can be written at all.
    bool negateLiteral = false;
    if (!ops.empty() && ops.back().first == TokenKind::kMinus &&
        (tok_.kind == TokenKind::kInt || tok_.kind == TokenKind::kDouble)) {
      negateLiteral = true;
      ops.pop_back();
    }
    NodePtr operand = member(negateLiteral);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      operand =
          makeCall(it->first == TokenKind::kNot ? "!_" : "-_", it->second, std::move(operand));
    }
    return operand;
  }

  std::vector<NodePtr> arguments(TokenKind close) {
    std::vector<NodePtr> args;
    while (tok_.kind != close) {
      args.push_back(expr());
      if (tok_.kind != TokenKind::kComma) break;
      advance();
    }
    expect(close);
    return args;
  }

  NodePtr member(bool negateLiteral) {
    NodePtr node = primary(negateLiteral);
    for (;;) {
      if (tok_.kind == TokenKind::kDot) {
        advance();
        if (tok_.kind != TokenKind::kIdent) unexpected();
        std::string field(tok_.text);
        const std::uint32_t pos = tok_.pos;
        advance();
        if (tok_.kind != TokenKind::kLParen) {
          std::vector<NodePtr> operand;
          operand.push_back(std::move(node));
          node = makeNode(NodeKind::kSelect, pos, std::move(field), std::move(operand));
          continue;
        }
        advance();
        std::vector<NodePtr> args = arguments(TokenKind::kRParen);
        node = memberCall(std::move(node), field, pos, std::move(args));
      } else if (tok_.kind == TokenKind::kLBracket) {
        const std::uint32_t pos = tok_.pos;
        advance();
        NodePtr index = expr();
        expect(TokenKind::kRBracket);
        node = makeCall("_[_]", pos, std::move(node), std::move(index));
        node->kind = NodeKind::kIndex;
      } else {
        return node;
      }
    }
  }

  // Receiver-style calls, expanding the comprehension macros and cel.bind.
  NodePtr memberCall(NodePtr target, const std::string& name, std::uint32_t pos,
                     std::vector<NodePtr> args) {
    const bool simpleFirst = !args.empty() && args[0]->kind == NodeKind::kIdent;
    if (name == "bind" && target->kind == NodeKind::kIdent && target->name == "cel") {
      if (args.size() != 3 || !simpleFirst)
        failSyntax(pos, "cel.bind() variable must be a simple identifier");
      std::vector<NodePtr> parts;
      parts.push_back(std::move(args[1]));
      parts.push_back(std::move(args[2]));
      return makeNode(NodeKind::kBind, pos, args[0]->name, std::move(parts));
    }
    static constexpr std::array<std::pair<std::string_view, Macro>, 5> kMacros = {{
        {"all", Macro::kAll},
        {"exists", Macro::kExists},
        {"exists_one", Macro::kExistsOne},
        {"map", Macro::kMap},
        {"filter", Macro::kFilter},
    }};
    for (const auto& [macroName, macro] : kMacros) {
      if (name != macroName) continue;
      const bool arityOk = args.size() == 2 || (macro == Macro::kMap && args.size() == 3);
      if (!arityOk) break;  // not the macro: an ordinary (probably undeclared) call
      if (!simpleFirst) failSyntax(args[0]->pos, "Syntax error: argument must be a simple name");
      std::vector<NodePtr> parts;
      parts.push_back(std::move(target));
      for (std::size_t i = 1; i < args.size(); ++i) parts.push_back(std::move(args[i]));
      NodePtr node = makeNode(NodeKind::kComprehension, pos, args[0]->name, std::move(parts));
      node->macro = macro;
      return node;
    }
    std::vector<NodePtr> parts;
    parts.push_back(std::move(target));
    for (NodePtr& arg : args) parts.push_back(std::move(arg));
    NodePtr call = makeNode(NodeKind::kCall, pos, name, std::move(parts));
    call->member = true;
    return call;
  }

  NodePtr primary(bool negate) {
    const std::uint32_t pos = tok_.pos;
    switch (tok_.kind) {
      case TokenKind::kInt:
      case TokenKind::kUint:
      case TokenKind::kDouble:
        return numberLiteral(negate);
      case TokenKind::kString: {
        NodePtr node = makeNode(NodeKind::kLiteral, pos);
        node->text = std::move(tok_.value);
        node->value = Value::string(node->text);
        node->type = Type(TypeKind::kString);
        advance();
        return node;
      }
      case TokenKind::kBytes:
        failSyntax(pos, "bytes literals are not supported in device selectors");
      case TokenKind::kTrue:
      case TokenKind::kFalse: {
        NodePtr node = makeNode(NodeKind::kLiteral, pos);
        node->value = Value::boolean(tok_.kind == TokenKind::kTrue);
        node->type = Type(TypeKind::kBool);
        advance();
        return node;
      }
      case TokenKind::kNull: {
        NodePtr node = makeNode(NodeKind::kLiteral, pos);
        node->type = Type(TypeKind::kNull);
        advance();
        return node;
      }
      case TokenKind::kLParen: {
        advance();
        NodePtr inner = expr();
        expect(TokenKind::kRParen);
        return inner;
      }
      case TokenKind::kLBracket: {
        advance();
        return makeNode(NodeKind::kList, pos, "", arguments(TokenKind::kRBracket));
      }
      case TokenKind::kLBrace:
        failSyntax(pos, "map literals are not supported in device selectors");
      case TokenKind::kIdent: {
        std::string name(tok_.text);
        if (isReserved(name)) failSyntax(pos, "Syntax error: reserved identifier: " + name);
        advance();
        if (tok_.kind != TokenKind::kLParen)
          return makeNode(NodeKind::kIdent, pos, std::move(name));
        advance();
        std::vector<NodePtr> args = arguments(TokenKind::kRParen);
        if (name == "has") {
          // has(e.f) is a presence test of field f, not a function call.
          if (args.size() != 1 || args[0]->kind != NodeKind::kSelect) {
            failSyntax(pos, "invalid argument to has() macro");
          }
          NodePtr select = std::move(args[0]);
          std::vector<NodePtr> operand;
          operand.push_back(std::move(select->children[0]));
          return makeNode(NodeKind::kHas, select->pos, std::move(select->name), std::move(operand));
        }
        return makeNode(NodeKind::kCall, pos, std::move(name), std::move(args));
      }
      default:
        unexpected();
    }
  }

  NodePtr numberLiteral(bool negate) {
    NodePtr node = makeNode(NodeKind::kLiteral, tok_.pos);
    const std::string_view text = tok_.text;
    if (tok_.kind == TokenKind::kDouble) {
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size()) {
        failSyntax(tok_.pos, "invalid double literal");
      }
      node->value = Value::dbl(negate ? -value : value);
      node->type = Type(TypeKind::kDouble);
    } else {
      const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
      const std::string_view digits = hex ? text.substr(2) : text;
      std::uint64_t magnitude = 0;
      const auto [end, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, hex ? 16 : 10);
      const bool parsed = ec == std::errc() && end == digits.data() + digits.size();
      if (tok_.kind == TokenKind::kUint) {
        if (!parsed) failSyntax(tok_.pos, "invalid uint literal");
        node->value = Value::unsignedInt(magnitude);
        node->type = Type(TypeKind::kUint);
      } else {
        const std::uint64_t limit =
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negate ? 1 : 0);
        if (!parsed || magnitude > limit) failSyntax(tok_.pos, "invalid int literal");
        node->value = Value::integer(negate ? static_cast<std::int64_t>(0 - magnitude)
                                            : static_cast<std::int64_t>(magnitude));
        node->type = Type(TypeKind::kInt);
      }
    }
    advance();
    return node;
  }

  Lexer lexer_;
  Token tok_;
  int nesting_ = 0;
};

}  // namespace

NodePtr parse(std::string_view source, CompileError& error) {
  try {
    Parser parser(source);
    return parser.parseAll();
  } catch (const SyntaxError& e) {
    error = e.error;
    return nullptr;
  }
}

}  // namespace ledger::cel
