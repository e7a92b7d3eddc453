// Regular expressions for CEL's matches(), on the RE2 library.
//
// cel-go implements matches() with Go's regexp.MatchString (common/types/
// string.go String.Match), which is RE2 syntax and semantics: an unanchored
// search over UTF-8 code points, in time linear in the text, with no
// backreferences or lookaround. RE2 itself differs from Go's regexp/syntax in
// two spellings, which compile() aligns with Go: Go (since 1.22) also accepts
// `(?<name>...)`, and Go has no `\C` (any byte).
//
// Errors are Go's regexp/syntax messages, as cel-go reports them:
// "error parsing regexp: <code>: `<fragment>`"; the fragment is the one RE2
// names, which is usually Go's.
//
// Ownership: compile() returns a shared immutable pattern. Thread safety: a
// compiled Regex may be searched from several threads at once (RE2 is
// thread-safe for matching). Nothing here throws for bad patterns.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace ledger::cel {

class Regex {
 public:
  // nullptr, with `error` set in Go's words, when the pattern is invalid.
  static std::shared_ptr<const Regex> compile(std::string_view pattern, std::string& error);

  // Whether the pattern matches anywhere in `text` (regexp.MatchString).
  bool search(std::string_view text) const;

  explicit Regex(std::unique_ptr<const re2::RE2> re);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

 private:
  std::unique_ptr<const re2::RE2> re_;
};

}  // namespace ledger::cel
