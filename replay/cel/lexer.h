// Tokens of the CEL grammar (cel-spec langdef.md, "Syntax").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ledger::cel {

enum class TokenKind : std::uint8_t {
  kEnd,
  kError,  // `value` holds the message
  kIdent,
  kInt,     // `text` is the literal without sign or suffix
  kUint,    // `text` excludes the trailing u/U
  kDouble,  // `text` is the literal
  kString,  // `value` holds the decoded text
  kBytes,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kNot,
  kLess,
  kLessEq,
  kGreater,
  kGreaterEq,
  kEq,
  kNotEq,
  kAnd,
  kOr,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::uint32_t pos = 0;  // byte offset in the expression
  std::string_view text;  // the source text of the token
  std::string value;      // decoded string literal, or an error message
};

// Splits an expression into tokens on demand. Whitespace and `//` comments
// are skipped. Errors come back as a kError token at the offending offset.
class Lexer {
 public:
  explicit Lexer(std::string_view source) : source_(source) {}
  Token next();

 private:
  Token number(std::uint32_t start);
  Token stringLiteral(std::uint32_t start, bool raw, bool bytes);
  Token error(std::uint32_t pos, std::string message) const;

  std::string_view source_;
  std::uint32_t pos_ = 0;
};

// "abc" for TokenKind::kString etc.; used in syntax error messages.
std::string_view describe(TokenKind kind);

}  // namespace ledger::cel
