// CEL lexis per cel-spec langdef.md: identifiers, int/uint/double literals,
// quoted/triple-quoted/raw strings with CEL's escapes, operators, comments.
#include "replay/cel/lexer.h"

#include <array>

namespace ledger::cel {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHex(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool isIdentStart(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

int hexValue(char c) {
  if (isDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

void appendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

Token Lexer::error(std::uint32_t pos, std::string message) const {
  Token t;
  t.kind = TokenKind::kError;
  t.pos = pos;
  t.value = std::move(message);
  return t;
}

Token Lexer::next() {
  // Whitespace ([\t\n\f\r ]) and `//` comments to end of line.
  while (pos_ < source_.size()) {
    const char c = source_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < source_.size() && source_[pos_ + 1] == '/') {
      while (pos_ < source_.size() && source_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  Token t;
  t.pos = pos_;
  if (pos_ >= source_.size()) return t;

  const std::uint32_t start = pos_;
  const char c = source_[pos_];
  const char n = pos_ + 1 < source_.size() ? source_[pos_ + 1] : '\0';

  if (isDigit(c) || (c == '.' && isDigit(n))) return number(start);
  if (c == '"' || c == '\'') return stringLiteral(start, false, false);
  if ((c == 'r' || c == 'R') && (n == '"' || n == '\'')) {
    ++pos_;
    return stringLiteral(start, true, false);
  }
  if ((c == 'b' || c == 'B') && (n == '"' || n == '\'')) {
    ++pos_;
    return stringLiteral(start, false, true);
  }
  if (isIdentStart(c)) {
    while (pos_ < source_.size() && isIdentChar(source_[pos_])) ++pos_;
    t.text = source_.substr(start, pos_ - start);
    if (t.text == "true") {
      t.kind = TokenKind::kTrue;
    } else if (t.text == "false") {
      t.kind = TokenKind::kFalse;
    } else if (t.text == "null") {
      t.kind = TokenKind::kNull;
    } else if (t.text == "in") {
      t.kind = TokenKind::kIn;
    } else {
      t.kind = TokenKind::kIdent;
    }
    return t;
  }

  struct Punct {
    std::string_view text;
    TokenKind kind;
  };
  // Two-character operators first so "<=" wins over "<".
  static constexpr std::array<Punct, 25> kPunct = {{
      {"&&", TokenKind::kAnd},     {"||", TokenKind::kOr},     {"==", TokenKind::kEq},
      {"!=", TokenKind::kNotEq},   {"<=", TokenKind::kLessEq}, {">=", TokenKind::kGreaterEq},
      {"(", TokenKind::kLParen},   {")", TokenKind::kRParen},  {"[", TokenKind::kLBracket},
      {"]", TokenKind::kRBracket}, {"{", TokenKind::kLBrace},  {"}", TokenKind::kRBrace},
      {".", TokenKind::kDot},      {",", TokenKind::kComma},   {":", TokenKind::kColon},
      {"?", TokenKind::kQuestion}, {"+", TokenKind::kPlus},    {"-", TokenKind::kMinus},
      {"*", TokenKind::kStar},     {"/", TokenKind::kSlash},   {"%", TokenKind::kPercent},
      {"!", TokenKind::kNot},      {"<", TokenKind::kLess},    {">", TokenKind::kGreater},
      {"=", TokenKind::kError},
  }};
  for (const Punct& p : kPunct) {
    if (source_.substr(pos_, p.text.size()) == p.text) {
      if (p.kind == TokenKind::kError) break;  // a lone '=' is not CEL
      pos_ += static_cast<std::uint32_t>(p.text.size());
      t.kind = p.kind;
      t.text = p.text;
      return t;
    }
  }
  return error(start, "Syntax error: token recognition error at: '" +
                          std::string(source_.substr(start, 1)) + "'");
}

// INT_LIT, UINT_LIT (INT_LIT [uU]) and FLOAT_LIT; the sign is the parser's.
Token Lexer::number(std::uint32_t start) {
  Token t;
  t.pos = start;
  const auto at = [&](std::uint32_t i) { return i < source_.size() ? source_[i] : '\0'; };
  if (at(pos_) == '0' && (at(pos_ + 1) == 'x' || at(pos_ + 1) == 'X') && isHex(at(pos_ + 2))) {
    pos_ += 2;
    while (isHex(at(pos_))) ++pos_;
    t.text = source_.substr(start, pos_ - start);
    t.kind = TokenKind::kInt;
  } else {
    bool isFloat = false;
    while (isDigit(at(pos_))) ++pos_;
    if (at(pos_) == '.' && isDigit(at(pos_ + 1))) {
      isFloat = true;
      ++pos_;
      while (isDigit(at(pos_))) ++pos_;
    }
    if (at(pos_) == 'e' || at(pos_) == 'E') {
      std::uint32_t p = pos_ + 1;
      if (at(p) == '+' || at(p) == '-') ++p;
      if (isDigit(at(p))) {
        isFloat = true;
        pos_ = p;
        while (isDigit(at(pos_))) ++pos_;
      }
    }
    t.text = source_.substr(start, pos_ - start);
    t.kind = isFloat ? TokenKind::kDouble : TokenKind::kInt;
  }
  if (t.kind == TokenKind::kInt && (at(pos_) == 'u' || at(pos_) == 'U')) {
    ++pos_;
    t.kind = TokenKind::kUint;
  }
  if (isIdentChar(at(pos_)) || at(pos_) == '.') {
    if (at(pos_) != '.' || isDigit(at(pos_ + 1))) {
      return error(pos_, "Syntax error: malformed number literal '" +
                             std::string(source_.substr(start, pos_ + 1 - start)) + "'");
    }
  }
  return t;
}

// Quoted strings: '...' "..." '''...''' """...""", optionally raw (no escape
// processing). Escapes follow langdef.md; \x, \u, \U and octal escapes denote
// code points in strings (so "\xFF" is U+00FF) and bytes in bytes literals.
Token Lexer::stringLiteral(std::uint32_t start, bool raw, bool bytes) {
  const char quote = source_[pos_];
  const bool triple = source_.substr(pos_, 3) == std::string(3, quote);
  pos_ += triple ? 3 : 1;
  Token t;
  t.pos = start;
  t.kind = bytes ? TokenKind::kBytes : TokenKind::kString;
  std::string& out = t.value;
  for (;;) {
    if (pos_ >= source_.size()) return error(start, "Syntax error: unterminated string literal");
    const char c = source_[pos_];
    if (triple ? source_.substr(pos_, 3) == std::string(3, quote) : c == quote) {
      pos_ += triple ? 3 : 1;
      break;
    }
    if (!triple && (c == '\n' || c == '\r')) {
      return error(pos_, "Syntax error: newline in string literal");
    }
    if (c != '\\' || raw) {
      out.push_back(c);
      ++pos_;
      continue;
    }
    const std::uint32_t escapeAt = pos_;
    const char e = pos_ + 1 < source_.size() ? source_[pos_ + 1] : '\0';
    pos_ += 2;
    switch (e) {
      case 'a':
        out.push_back('\a');
        continue;
      case 'b':
        out.push_back('\b');
        continue;
      case 'f':
        out.push_back('\f');
        continue;
      case 'n':
        out.push_back('\n');
        continue;
      case 'r':
        out.push_back('\r');
        continue;
      case 't':
        out.push_back('\t');
        continue;
      case 'v':
        out.push_back('\v');
        continue;
      case '\\':
      case '?':
      case '"':
      case '\'':
      case '`':
        out.push_back(e);
        continue;
      default:
        break;
    }
    int digits = 0;
    int base = 16;
    if (e == 'x' || e == 'X') {
      digits = 2;
    } else if (e == 'u') {
      digits = 4;
    } else if (e == 'U') {
      digits = 8;
    } else if (e >= '0' && e <= '3') {
      digits = 2;
      base = 8;
      --pos_;  // the first octal digit is part of the value
      ++digits;
    } else {
      return error(escapeAt, "Syntax error: invalid escape sequence");
    }
    std::uint32_t cp = 0;
    for (int i = 0; i < digits; ++i, ++pos_) {
      const char d = pos_ < source_.size() ? source_[pos_] : '\0';
      const bool ok = base == 16 ? isHex(d) : (d >= '0' && d <= '7');
      if (!ok) return error(escapeAt, "Syntax error: invalid escape sequence");
      cp = cp * static_cast<std::uint32_t>(base) + static_cast<std::uint32_t>(hexValue(d));
    }
    if (bytes && (digits == 2 || base == 8)) {
      out.push_back(static_cast<char>(cp));
    } else if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return error(escapeAt, "Syntax error: invalid unicode code point in escape sequence");
    } else {
      appendUtf8(out, cp);
    }
  }
  t.text = source_.substr(start, pos_ - start);
  return t;
}

std::string_view describe(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEnd:
      return "<EOF>";
    case TokenKind::kError:
      return "<error>";
    case TokenKind::kIdent:
      return "identifier";
    case TokenKind::kInt:
      return "int literal";
    case TokenKind::kUint:
      return "uint literal";
    case TokenKind::kDouble:
      return "double literal";
    case TokenKind::kString:
      return "string literal";
    case TokenKind::kBytes:
      return "bytes literal";
    case TokenKind::kTrue:
      return "'true'";
    case TokenKind::kFalse:
      return "'false'";
    case TokenKind::kNull:
      return "'null'";
    case TokenKind::kIn:
      return "'in'";
    case TokenKind::kLParen:
      return "'('";
    case TokenKind::kRParen:
      return "')'";
    case TokenKind::kLBracket:
      return "'['";
    case TokenKind::kRBracket:
      return "']'";
    case TokenKind::kLBrace:
      return "'{'";
    case TokenKind::kRBrace:
      return "'}'";
    case TokenKind::kDot:
      return "'.'";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kQuestion:
      return "'?'";
    case TokenKind::kPlus:
      return "'+'";
    case TokenKind::kMinus:
      return "'-'";
    case TokenKind::kStar:
      return "'*'";
    case TokenKind::kSlash:
      return "'/'";
    case TokenKind::kPercent:
      return "'%'";
    case TokenKind::kNot:
      return "'!'";
    case TokenKind::kLess:
      return "'<'";
    case TokenKind::kLessEq:
      return "'<='";
    case TokenKind::kGreater:
      return "'>'";
    case TokenKind::kGreaterEq:
      return "'>='";
    case TokenKind::kEq:
      return "'=='";
    case TokenKind::kNotEq:
      return "'!='";
    case TokenKind::kAnd:
      return "'&&'";
    case TokenKind::kOr:
      return "'||'";
  }
  return "?";
}

}  // namespace ledger::cel
