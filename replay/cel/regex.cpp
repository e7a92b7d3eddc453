#include "replay/cel/regex.h"

#include <re2/re2.h>

namespace ledger::cel {

namespace {

// Go's regexp/syntax ErrorCode text for each RE2 error (regexp/syntax/parse.go).
std::string_view goErrorCode(re2::RE2::ErrorCode code) {
  switch (code) {
    case re2::RE2::ErrorBadEscape:
      return "invalid escape sequence";
    case re2::RE2::ErrorBadCharClass:
      return "invalid character class";
    case re2::RE2::ErrorBadCharRange:
      return "invalid character class range";
    case re2::RE2::ErrorMissingBracket:
      return "missing closing ]";
    case re2::RE2::ErrorMissingParen:
      return "missing closing )";
    case re2::RE2::ErrorUnexpectedParen:
      return "unexpected )";
    case re2::RE2::ErrorTrailingBackslash:
      return "trailing backslash at end of expression";
    case re2::RE2::ErrorRepeatArgument:
      return "missing argument to repetition operator";
    case re2::RE2::ErrorRepeatSize:
      return "invalid repeat count";
    case re2::RE2::ErrorRepeatOp:
      return "invalid nested repetition operator";
    case re2::RE2::ErrorBadPerlOp:
      return "invalid or unsupported Perl syntax";
    case re2::RE2::ErrorBadUTF8:
      return "invalid UTF-8";
    case re2::RE2::ErrorBadNamedCapture:
      return "invalid named capture";
    case re2::RE2::ErrorPatternTooLarge:
      return "expression too large";
    case re2::RE2::NoError:
    case re2::RE2::ErrorInternal:
      break;
  }
  return "regexp/syntax: internal error";
}

// regexp/syntax.Error.Error().
std::string goError(std::string_view code, std::string_view fragment) {
  return "error parsing regexp: " + std::string(code) + ": `" + std::string(fragment) + "`";
}

// Rewrites the spellings where RE2 and Go disagree (see regex.h): `(?<name>`
// becomes RE2's `(?P<name>`, and `\C` is refused as Go refuses it. Escapes
// and character classes are skipped so that e.g. `[(?<]` stays literal.
bool toRe2Syntax(std::string_view in, std::string& out, std::string& error) {
  out.reserve(in.size() + 4);
  bool inClass = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '\\' && i + 1 < in.size()) {
      if (in[i + 1] == 'C') {
        error = goError("invalid escape sequence", "\\C");
        return false;
      }
      out.append(in.substr(i, 2));
      ++i;
      continue;
    }
    if (inClass) {
      // `[:alpha:]` inside a class holds a ']' that does not close it.
      if (c == '[' && in.substr(i, 2) == "[:") {
        const std::size_t close = in.find(":]", i + 2);
        if (close != std::string_view::npos) {
          out.append(in.substr(i, close + 2 - i));
          i = close + 1;
          continue;
        }
      }
      if (c == ']') inClass = false;
      out += c;
      continue;
    }
    if (c == '[') {
      // A ']' right after '[' or '[^' is a literal member of the class.
      out += c;
      inClass = true;
      if (in.substr(i + 1, 1) == "^") out += in[++i];
      if (in.substr(i + 1, 1) == "]") out += in[++i];
      continue;
    }
    if (in.substr(i, 3) == "(?<" && in.substr(i, 4) != "(?<=" && in.substr(i, 4) != "(?<!") {
      out += "(?P<";
      i += 2;
      continue;
    }
    out += c;
  }
  return true;
}

}  // namespace

Regex::Regex(std::unique_ptr<const re2::RE2> re) : re_(std::move(re)) {}
Regex::~Regex() = default;

std::shared_ptr<const Regex> Regex::compile(std::string_view pattern, std::string& error) {
  std::string syntax;
  if (!toRe2Syntax(pattern, syntax, error)) return nullptr;
  re2::RE2::Options options;  // UTF-8, leftmost-first, like Go's regexp.Compile
  options.set_log_errors(false);
  auto re = std::make_unique<const re2::RE2>(syntax, options);
  if (!re->ok()) {
    error = goError(goErrorCode(re->error_code()), re->error_arg());
    return nullptr;
  }
  return std::make_shared<const Regex>(std::move(re));
}

bool Regex::search(std::string_view text) const {
  return re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

}  // namespace ledger::cel
