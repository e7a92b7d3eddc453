// CEL's matches() is Go's regexp.MatchString (cel-go common/types/string.go
// String.Match): RE2 syntax, an unanchored search, on code points. The cases
// are ones where an ECMAScript engine answers differently, and the errors are
// Go's regexp/syntax messages, which cel-go passes through unchanged.
#include "replay/cel/regex.h"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "replay/cel/device_selector.h"

namespace {

using ledger::cel::Device;
using ledger::cel::DeviceSelector;
using ledger::cel::Regex;

bool search(std::string_view pattern, std::string_view text) {
  std::string error;
  const auto re = Regex::compile(pattern, error);
  INFO("pattern: " << pattern << "\nerror: " << error);
  REQUIRE(re != nullptr);
  return re->search(text);
}

std::string regexError(std::string_view pattern) {
  std::string error;
  const auto re = Regex::compile(pattern, error);
  INFO("pattern: " << pattern);
  REQUIRE(re == nullptr);
  return error;
}

Device withAttributes(const std::string& model, const std::string& pattern) {
  Device d;
  d.driver = "dra.example.com";
  d.attributes["dra.example.com"] = {{"model", model}, {"pattern", pattern}};
  return d;
}

}  // namespace

TEST_CASE("regexp/syntax: RE2 syntax that ECMAScript lacks", "[cel][regex]") {
  SECTION("Unicode classes") {
    CHECK(search(R"(^\pL+$)", "Straße"));
    CHECK_FALSE(search(R"(^\pL+$)", "a100"));
    CHECK(search(R"(^\p{Greek}+$)", "αβγ"));
    CHECK_FALSE(search(R"(\p{Greek})", "abc"));
    CHECK(search(R"(\PL)", "ab1"));
  }
  SECTION("flag groups anywhere, scoped or not") {
    CHECK(search("^gpu-(?i)H100$", "gpu-h100"));
    CHECK_FALSE(search("^(?i:gpu)-H100$", "GPU-h100"));
    CHECK(search("^(?i:gpu)-H100$", "GPU-H100"));
    CHECK(search("(?s)^a.b$", "a\nb"));
    CHECK_FALSE(search("^a.b$", "a\nb"));
    CHECK(search("(?m)^b$", "a\nb"));
    CHECK_FALSE(search("^b$", "a\nb"));
  }
  SECTION("POSIX classes, quoting and named groups") {
    CHECK(search(R"(^[[:alpha:]]+$)", "abc"));
    CHECK(search(R"(^\Qa.b\E$)", "a.b"));
    CHECK_FALSE(search(R"(^\Qa.b\E$)", "axb"));
    CHECK(search("(?P<model>h100)", "gpu-h100"));
    CHECK(search("(?<model>h100)", "gpu-h100"));  // Go 1.22 accepts this spelling too
    CHECK(search(R"([(?<])", "<"));               // inside a class it stays literal
  }
  SECTION("a dot is one code point, not one byte") {
    CHECK(search("^.$", "é"));
    CHECK_FALSE(search("^..$", "é"));
  }
  SECTION("linear time: no exponential backtracking") {
    CHECK_FALSE(search("^(a+)+$", std::string(5000, 'a') + "!"));
  }
}

TEST_CASE("regexp/syntax: what RE2 rejects, in Go's words", "[cel][regex]") {
  CHECK(regexError(R"((a)\1)") == "error parsing regexp: invalid escape sequence: `\\1`");
  CHECK(regexError("(?=a)") == "error parsing regexp: invalid or unsupported Perl syntax: `(?=`");
  CHECK(regexError("a**") == "error parsing regexp: invalid nested repetition operator: `**`");
  CHECK(regexError("(") == "error parsing regexp: missing closing ): `(`");
  CHECK(regexError(")") == "error parsing regexp: unexpected ): `)`");
  CHECK(regexError("[z-a]") == "error parsing regexp: invalid character class range: `z-a`");
  CHECK(regexError("x{1001}") == "error parsing regexp: invalid repeat count: `{1001}`");
  CHECK(regexError("(a{1000}){1000}") == "error parsing regexp: invalid repeat count: `{1000}`");
  // RE2's \C (any byte) is not Go syntax.
  CHECK(regexError(R"(\C)") == "error parsing regexp: invalid escape sequence: `\\C`");
}

TEST_CASE("cel-go String.Match: an invalid pattern is an evaluation error", "[cel][regex]") {
  const auto selector = DeviceSelector::tryCompile(
      R"(device.attributes["dra.example.com"].model.matches(device.attributes["dra.example.com"].pattern))");
  REQUIRE(selector.has_value());
  SECTION("a valid pattern from an attribute") {
    const auto r = selector->evaluate(withAttributes("H100", R"(^\pL\d+$)"));
    REQUIRE(r.ok());
    CHECK(r.matched);
  }
  SECTION("a backreference") {
    const auto r = selector->evaluate(withAttributes("aa", R"((a)\1)"));
    CHECK_FALSE(r.matched);
    CHECK(r.error == "error parsing regexp: invalid escape sequence: `\\1`");
  }
}

TEST_CASE("cel.ValidateRegexLiterals: an invalid literal pattern is a compile error",
          "[cel][regex]") {
  std::string error;
  CHECK_FALSE(DeviceSelector::tryCompile(R"(device.driver.matches("(a)\\1"))", &error));
  CHECK_THAT(error, Catch::Contains("ERROR: <input>:1:23: invalid matches argument"));
}
