// Public entry points: compile (limits, parse, check), evaluate, cache.
#include "replay/cel/device_selector.h"

#include "replay/cel/ast.h"
#include "replay/cel/cel_limits.h"
#include "replay/cel/checker.h"
#include "replay/cel/evaluator.h"
#include "replay/cel/parser.h"

namespace ledger::cel {
namespace {

bool validUtf8(std::string_view s, std::uint32_t& badAt) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 1;
    std::uint32_t cp = c;
    if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else if (c >= 0xE0) {
      len = c <= 0xEF ? 3 : 0;
      cp = c & 0x0F;
    } else if (c >= 0xC2) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0x80) {
      len = 0;
    }
    if (len == 0 || i + len > s.size()) {
      badAt = static_cast<std::uint32_t>(i);
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) {
        badAt = static_cast<std::uint32_t>(i);
        return false;
      }
      cp = (cp << 6) | (cc & 0x3F);
    }
    const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      badAt = static_cast<std::uint32_t>(i);
      return false;
    }
    i += len;
  }
  return true;
}

// CompilationResult.Error.Detail (dynamic-resource-allocation/cel compile.go):
// "compilation failed: " and cel-go's issue format, "ERROR: <input>:line:column:
// message" with a 1-based column counted in code points, then the line and a
// caret; compile.go's own checks give their message alone.
std::string formatError(std::string_view source, const CompileError& e) {
  if (!e.celIssue) return e.message;
  const std::size_t pos = std::min<std::size_t>(e.pos, source.size());
  std::size_t line = 1;
  std::size_t lineStart = 0;
  for (std::size_t i = 0; i < pos; ++i) {
    if (source[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  }
  std::size_t column = 1;
  for (std::size_t i = lineStart; i < pos; ++i) {
    if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80) ++column;
  }
  const std::size_t lineEnd = std::min(source.find('\n', lineStart), source.size());
  std::string text = "compilation failed: ERROR: <input>:" + std::to_string(line) + ":" +
                     std::to_string(column) + ": " + e.message;
  const std::string_view lineText = source.substr(lineStart, lineEnd - lineStart);
  if (lineText.size() <= 200) {  // the snippet helps on short lines only
    text += "\n | " + std::string(lineText) + "\n | " + std::string(column - 1, '.') + "^";
  }
  return text;
}

}  // namespace

DeviceSelector::DeviceSelector(std::string expression, std::shared_ptr<const Node> root)
    : expression_(std::move(expression)), root_(std::move(root)) {}

std::optional<DeviceSelector> DeviceSelector::tryCompile(std::string_view expression,
                                                         std::string* error) {
  CompileError problem;
  std::uint32_t badAt = 0;
  NodePtr root;
  if (expression.size() > kMaxExpressionBytes) {
    problem = {static_cast<std::uint32_t>(kMaxExpressionBytes),
               "expression is " + std::to_string(expression.size()) +
                   " bytes long, more than the maximum of " + std::to_string(kMaxExpressionBytes)};
  } else if (!validUtf8(expression, badAt)) {
    problem = {badAt, "expression is not valid UTF-8"};
  } else {
    root = parse(expression, problem);
    if (root && !check(*root, problem)) root.reset();
  }
  if (!root) {
    if (error != nullptr) *error = formatError(expression, problem);
    return std::nullopt;
  }
  return DeviceSelector(std::string(expression), std::shared_ptr<const Node>(std::move(root)));
}

EvalResult DeviceSelector::evaluate(const Device& device) const {
  EvalContext ctx(device);
  const Value result = cel::evaluate(*root_, ctx);
  EvalResult out;
  if (ctx.exhausted()) {
    out.error = "operation cancelled: actual cost limit exceeded";
  } else if (result.isError()) {
    out.error = *result.error;
  } else if (result.kind != ValueKind::kBool) {
    // compile.go DeviceMatches: the result must convert to bool.
    out.error =
        "CEL result of type " + std::string(typeName(result)) + " could not be converted to bool";
  } else {
    out.matched = result.b;
  }
  return out;
}

const std::string& DeviceSelector::expression() const { return expression_; }

const SelectorCache::Entry& SelectorCache::get(std::string_view expression) {
  auto it = entries_.find(std::string(expression));
  if (it != entries_.end()) return *it->second;
  auto entry = std::make_unique<Entry>();
  entry->selector = DeviceSelector::tryCompile(expression, &entry->error);
  const Entry& ref = *entry;
  entries_.emplace(std::string(expression), std::move(entry));
  return ref;
}

}  // namespace ledger::cel
