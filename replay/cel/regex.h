// Regular expressions for CEL's matches().
//
// CEL specifies RE2 syntax; no RE2 is packaged with the C++ toolchain we
// build with, so this approximates it with std::regex (ECMAScript grammar)
// after translating the RE2-only spellings selectors tend to use: a leading
// (?i) flag group, (?P<name>...) / (?<name>...) groups, \A and \z. Matching
// is unanchored like RE2's (regexp.MatchString) and works on bytes, so `.`
// matches one byte of a multi-byte character. Other RE2-only syntax (\pL,
// [[:word:]], (?s), possessive forms...) is rejected as an invalid pattern.
//
// Safety: patterns are bounded in length, nesting and expanded size, and run
// on libstdc++'s polynomial (breadth-first) executor, so neither a hostile
// pattern nor a long subject can backtrack exponentially or recurse deeply.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ledger::cel {

class Regex {
 public:
  // nullptr and a message when the pattern is invalid or over the limits.
  static std::shared_ptr<const Regex> compile(std::string_view pattern, std::string& error);

  // Whether the pattern matches anywhere in `text`; nullopt when the engine
  // gives up (std::regex_error at match time).
  std::optional<bool> search(std::string_view text) const;

  // Expanded size estimate, used to charge evaluation cost.
  std::size_t programSize() const { return programSize_; }

  struct Impl;  // holds the std::regex; <regex> stays out of this header
  Regex(std::unique_ptr<const Impl> impl, std::size_t programSize);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

 private:
  std::unique_ptr<const Impl> impl_;
  std::size_t programSize_;
};

}  // namespace ledger::cel
