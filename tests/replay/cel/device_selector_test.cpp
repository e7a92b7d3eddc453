// Cases mirrored from k8s.io/dynamic-resource-allocation/cel/compile_test.go
// (each SECTION is named after the upstream test case), from the quantity
// and semver libraries' tests in k8s.io/apiserver/pkg/cel/library, plus error
// handling and hostile-input cases of our own.
#include "replay/cel/device_selector.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

namespace {

using ledger::Quantity;
using ledger::cel::AttributeValue;
using ledger::cel::Device;
using ledger::cel::DeviceSelector;
using ledger::cel::EvalResult;
using ledger::cel::Semver;

Semver version(const char* text) { return *ledger::cel::parseSemver(text); }

// Builds a device the way DeviceMatches does: names without a domain get the
// driver as domain (parseQualifiedName).
struct DeviceBuilder {
  Device device;
  explicit DeviceBuilder(std::string driver = "") { device.driver = std::move(driver); }
  DeviceBuilder& attr(const std::string& name, AttributeValue value) {
    const auto [domain, id] = split(name);
    device.attributes[domain][id] = std::move(value);
    return *this;
  }
  DeviceBuilder& cap(const std::string& name, const char* quantity) {
    const auto [domain, id] = split(name);
    device.capacity[domain][id] = Quantity::parse(quantity);
    return *this;
  }
  std::pair<std::string, std::string> split(const std::string& name) const {
    const std::size_t slash = name.find('/');
    if (slash == std::string::npos) return {device.driver, name};
    return {name.substr(0, slash), name.substr(slash + 1)};
  }
};

std::string selectorError(const std::string& expression) {
  std::string error;
  const auto selector = DeviceSelector::tryCompile(expression, &error);
  if (selector) return "";
  REQUIRE_FALSE(error.empty());
  return error;
}

EvalResult evaluateOn(const std::string& expression, const Device& device = Device{}) {
  std::string error;
  const auto selector = DeviceSelector::tryCompile(expression, &error);
  INFO("expression: " << expression << "\ncompile error: " << error);
  REQUIRE(selector.has_value());
  CHECK(selector->expression() == expression);
  return selector->evaluate(device);
}

void expectMatch(const std::string& expression, bool want, const Device& device = Device{}) {
  const EvalResult r = evaluateOn(expression, device);
  INFO("expression: " << expression << "\nerror: " << r.error);
  REQUIRE(r.ok());
  CHECK(r.matched == want);
}

void expectMatchError(const std::string& expression, const std::string& want,
                      const Device& device = Device{}) {
  const EvalResult r = evaluateOn(expression, device);
  INFO("expression: " << expression);
  CHECK_FALSE(r.matched);
  CHECK_THAT(r.error, Catch::Contains(want));
}

void expectCompileError(const std::string& expression, const std::string& want) {
  INFO("expression: " << expression);
  CHECK_THAT(selectorError(expression), Catch::Contains(want));
}

constexpr const char* kDriver = "dra.example.com";

}  // namespace

TEST_CASE("compile_test.go TestCEL: basics", "[cel][upstream]") {
  SECTION("true") { expectMatch("true", true); }
  SECTION("false") { expectMatch("false", false); }
  SECTION("syntax-error") { expectCompileError("?!", "Syntax error"); }
  SECTION("type-error") {
    // CompileCELExpression's own check, after env.Compile: a plain detail,
    // not a cel-go issue ("compilation failed: ERROR: ...").
    CHECK(selectorError("1") == "must evaluate to bool or the unknown type, not int");
  }
  SECTION("runtime-error-lookup-identifier") {
    expectMatchError(
        R"(device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0")))",
        "no such key: noSuchAttr");
  }
  SECTION("runtime-error-lookup-map") {
    expectMatchError(
        R"(device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0")))",
        "no such key: noSuchAttr");
  }
  SECTION("domain-check-negative") {
    expectMatch(R"("no-such-domain" in device.attributes)", false);
  }
  SECTION("domain-check-positive") {
    expectMatch(R"("dra.example.com" in device.attributes)", true,
                DeviceBuilder().attr("dra.example.com/something", true).device);
  }
  SECTION("empty-driver-name") { expectMatch(R"(device.driver == "")", true); }
  SECTION("real-driver-name") {
    expectMatch(R"(device.driver == "dra.example.com")", true, DeviceBuilder(kDriver).device);
  }
}

TEST_CASE("compile_test.go TestCEL: attribute access", "[cel][upstream]") {
  const Device named = DeviceBuilder(kDriver).attr("name", true).device;
  SECTION("driver-name-qualifier") {
    expectMatch(R"(device.attributes["dra.example.com"].name)", true, named);
  }
  SECTION("driver-name-qualifier-map-lookup") {
    expectMatch(R"(device.attributes["dra.example.com"]["name"])", true, named);
  }
  SECTION("bind") {
    expectMatch(R"(cel.bind(dra, device.attributes["dra.example.com"], dra.name))", true, named);
  }
  SECTION("qualified-attribute-name") {
    expectMatch(R"(device.attributes["other.example.com"].name)", true,
                DeviceBuilder(kDriver).attr("other.example.com/name", true).device);
  }
  SECTION("bool") { expectMatch(R"(device.attributes["dra.example.com"].name)", true, named); }
  SECTION("int") {
    expectMatch(R"(device.attributes["dra.example.com"].name > 0)", true,
                DeviceBuilder(kDriver).attr("name", std::int64_t{1}).device);
  }
  SECTION("string") {
    expectMatch(R"(device.attributes["dra.example.com"].name == "fish")", true,
                DeviceBuilder(kDriver).attr("name", std::string("fish")).device);
  }
  SECTION("version") {
    expectMatch(R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1")))", true,
                DeviceBuilder(kDriver).attr("name", version("1.0.0")).device);
  }
  SECTION("version_v") {
    expectMatch(
        R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true))",
        true, DeviceBuilder(kDriver).attr("name", version("1.0.0")).device);
  }
  SECTION("many") {
    expectMatch(
        R"(device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c)",
        true, DeviceBuilder(kDriver).attr("a", true).attr("b", true).attr("c", true).device);
  }
  SECTION("regexp_attribute") {
    expectMatch(R"(device.attributes["dra.example.com"].services.matches("[^a]?sym"))", true,
                DeviceBuilder(kDriver).attr("services", std::string("asymetric")).device);
  }
}

TEST_CASE("compile_test.go TestCEL: macros on scalar attributes", "[cel][upstream]") {
  SECTION("macro-exists-on-int") {
    expectMatchError(R"(device.attributes["dra.example.com"].name.exists(x, x > 0))",
                     "got 'types.Int', expected iterable type",
                     DeviceBuilder(kDriver).attr("name", std::int64_t{1}).device);
  }
  SECTION("macro-exists-on-bool") {
    expectMatchError(R"(device.attributes["dra.example.com"].name.exists(x, x == true))",
                     "got 'types.Bool', expected iterable type",
                     DeviceBuilder(kDriver).attr("name", true).device);
  }
  SECTION("macro-exists-on-string") {
    expectMatchError(R"(device.attributes["dra.example.com"].name.exists(x, x == "fish"))",
                     "got 'types.String', expected iterable type",
                     DeviceBuilder(kDriver).attr("name", std::string("fish")).device);
  }
  SECTION("macro-exists-on-version") {
    expectMatchError(
        R"(device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1"))))",
        "got 'cel.Semver', expected iterable type",
        DeviceBuilder(kDriver).attr("name", version("1.0.0")).device);
  }
  const Device services =
      DeviceBuilder(kDriver).attr("services", std::string("some_example_value")).device;
  SECTION("check_attribute_domains") {
    expectMatch(R"(device.attributes.exists_one(x, x == "dra.example.com"))", true, services);
  }
  SECTION("check_attribute_ids") {
    expectMatch(R"(device.attributes["dra.example.com"].exists_one(x, x == "services"))", true,
                services);
  }
  const Device memory = DeviceBuilder(kDriver).cap("memory", "1Mi").device;
  SECTION("check_capacity_domains") {
    expectMatch(R"(device.capacity.exists_one(x, x == "dra.example.com"))", true, memory);
  }
  SECTION("check_capacity_ids") {
    expectMatch(R"(device.capacity["dra.example.com"].exists_one(x, x == "memory"))", true, memory);
  }
  SECTION("expensive (find() replaced by matches(), which we support)") {
    const std::string ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
    const std::string expr = ten + ".all(x, " + ten + ".all(y, " + ten + ".all(z, " + ten +
                             ".all(z2, " + ten + ".all(z3, " + ten + ".all(z4, " + ten +
                             ".all(z5, '1'.matches('[0-9]*'))))))))";
    expectMatchError(expr, "actual cost limit exceeded", DeviceBuilder(kDriver).device);
  }
}

TEST_CASE("compile_test.go TestCEL: includes on scalar attributes", "[cel][upstream]") {
  const auto attr = [](AttributeValue v) {
    return DeviceBuilder(kDriver).attr("name", std::move(v)).device;
  };
  const std::string on = R"(device.attributes["dra.example.com"].name.includes()";
  SECTION("includes-function-on-bool-scalar-positive") {
    expectMatch(on + "true)", true, attr(true));
  }
  SECTION("includes-function-on-bool-scalar-negative") {
    expectMatch(on + "true)", false, attr(false));
  }
  SECTION("includes-function-on-int-scalar-positive") {
    expectMatch(on + "1)", true, attr(std::int64_t{1}));
  }
  SECTION("includes-function-on-int-scalar-negative") {
    expectMatch(on + "1)", false, attr(std::int64_t{2}));
  }
  SECTION("includes-function-on-string-scalar-positive") {
    expectMatch(on + "\"fish\")", true, attr(std::string("fish")));
  }
  SECTION("includes-function-on-string-scalar-negative") {
    expectMatch(on + "\"bird\")", false, attr(std::string("fish")));
  }
  SECTION("includes-function-on-semver-scalar-positive") {
    expectMatch(on + "semver(\"1.0.0\"))", true, attr(version("1.0.0")));
  }
  SECTION("includes-function-on-semver-scalar-negative") {
    expectMatch(on + "semver(\"2.0.0\"))", false, attr(version("1.0.0")));
  }
}

TEST_CASE("compile_test.go TestCEL: capacity and the big conjunction", "[cel][upstream]") {
  const Device oneMi = DeviceBuilder(kDriver).cap("name", "1Mi").device;
  SECTION("quantity") {
    expectMatch(R"(device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))", true,
                oneMi);
  }
  SECTION("check-positive") {
    expectMatch(
        R"("name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
        true, oneMi);
  }
  SECTION("check-negative") {
    expectMatch(
        R"(!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
        true);
  }
  SECTION("all") {
    const Device device = DeviceBuilder(kDriver)
                              .attr("bool", true)
                              .attr("int", std::int64_t{1})
                              .attr("string", std::string("fish"))
                              .attr("version", version("1.0.0"))
                              .cap("quantity", "1Mi")
                              .device;
    expectMatch(R"(
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
)",
                true, device);
  }
  SECTION("allow_multiple_allocations") {
    Device d = DeviceBuilder(kDriver).device;
    d.allowMultipleAllocations = true;
    expectMatch("device.allowMultipleAllocations == true", true, d);
  }
  SECTION("allow_multiple_allocations_default") {
    expectMatch("device.allowMultipleAllocations == false", true, DeviceBuilder(kDriver).device);
  }
}

TEST_CASE("library/quantity_test.go", "[cel][upstream]") {
  expectMatch(R"(quantity("12Mi") == quantity("12Mi"))", true);
  expectMatchError(R"(quantity("10Mo") == quantity("1"))",
                   "quantities must match the regular expression");
  expectMatchError(R"(quantity("10Mm") == quantity("1"))", "unable to parse quantity's suffix");
  expectMatch(R"(isQuantity("20"))", true);
  expectMatch(R"(isQuantity("20M"))", true);
  expectMatch(R"(isQuantity("20Mi"))", true);
  expectMatch(R"(isQuantity("20Mo"))", false);
  expectMatch(R"(isQuantity("10Mm"))", false);
  expectCompileError(R"(isQuantity([1, 2, 3]))", "found no matching overload for 'isQuantity'");
  expectMatch(R"(quantity("200M") == quantity("200M"))", true);
  expectMatch(R"(quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M"))",
              true);
  expectMatch(R"(quantity("200M") == quantity("0.3G"))", false);
  expectMatch(R"(quantity("50M").isLessThan(quantity("50Mi")))", true);
  expectMatch(R"(quantity("100M").isLessThan(quantity("50M")))", false);
  expectMatch(R"(quantity("50Mi").isGreaterThan(quantity("50M")))", true);
  expectMatch(R"(quantity("200M").compareTo(quantity("0.2G")) == 0)", true);
  expectMatch(R"(quantity("50M").compareTo(quantity("50Mi")) == -1)", true);
  expectMatch(R"(quantity("50Mi").compareTo(quantity("50M")) == 1)", true);
  expectMatch(R"(quantity("50k").add(quantity("20")) == quantity("50.02k"))", true);
  expectMatch(R"(quantity("50k").add(20).isLessThan(quantity("50020")))", false);
  expectMatch(R"(quantity("50k").sub(quantity("20")) == quantity("49.98k"))", true);
  expectMatch(R"(quantity("50k").sub(20) == quantity("49980"))", true);
  expectMatch(R"(quantity("50k").add(20).sub(quantity("100k")).asInteger() == -49980)", true);
  expectMatch(R"(quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() == 20)",
              true);
  expectMatch(R"(quantity("50k").asInteger() == 50000)", true);
  expectMatchError(R"(quantity("9999999999999999999G").asInteger() == 1)",
                   "cannot convert value to integer");
  expectMatch(R"(quantity("9999999999999999999G").isInteger())", false);
  expectMatch(R"(quantity("50").isInteger())", true);
  expectMatch(R"(quantity("50.703k").asApproximateFloat() == 50703.0)", true);
  expectMatch(
      R"(sign(quantity("-1m")) == -1 && sign(quantity("0")) == 0 && sign(quantity("3")) == 1)",
      true);
}

TEST_CASE("library/semver_test.go", "[cel][upstream]") {
  expectMatch(R"(isSemver("1.0.0"))", true);
  expectMatch(R"(isSemver("hello"))", false);
  expectMatch(R"(isSemver("v1.0"))", false);
  expectMatch(R"(isSemver("v1.0", true))", true);
  expectMatch(R"(isSemver("01.01.01", true))", true);
  expectMatch(R"(isSemver("01.01.01"))", false);
  expectMatch(R"(isSemver("1.0-alpha", true))", false);  // short version with prerelease
  expectMatch(R"(semver("1.0", true) == semver("1.0.0"))", true);
  expectMatch(
      R"(semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3)",
      true);
  expectMatch(R"(semver("1.2.3").compareTo(semver("2.0.0")) == -1)", true);
  expectMatch(R"(semver("1.2.3").compareTo(semver("0.1.2")) == 1)", true);
  expectMatch(R"(semver("1.0.0-alpha").isLessThan(semver("1.0.0")))", true);
  expectMatch(R"(semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta")))", true);
  expectMatch(R"(semver("1.0.0-2").isLessThan(semver("1.0.0-11")))", true);
  expectMatch(R"(semver("1.0.0+build.1") == semver("1.0.0+build.2"))", true);
  expectMatchError(R"(semver("200K") == semver("1.0.0"))", "No Major.Minor.Patch elements found");
}

TEST_CASE("Errors are errors, not false", "[cel]") {
  const Device d =
      DeviceBuilder(kDriver).attr("name", std::string("fish")).attr("n", std::int64_t{5}).device;
  SECTION("a missing attribute is an error") {
    expectMatchError(R"(device.attributes["dra.example.com"].missing == "x")",
                     "no such key: missing", d);
    expectMatchError(R"(!device.attributes["dra.example.com"].missing)", "no such key: missing", d);
  }
  SECTION("map index of a missing key, in cel-go's words") {
    // DeviceMatches' inner maps are plain Go maps: a missing id is cel-go's
    // "no such key", for attributes and capacity alike, by index or field.
    const Device c = DeviceBuilder(kDriver).cap("memory", "80Gi").device;
    const EvalResult byIndex =
        evaluateOn(R"(device.attributes["dra.example.com"]["model"] == "")", d);
    CHECK(byIndex.error == "no such key: model");
    const EvalResult capacity =
        evaluateOn(R"(device.capacity["dra.example.com"].cores.isGreaterThan(quantity("1")))", c);
    CHECK(capacity.error == "no such key: cores");
  }
  SECTION("&& and || absorb errors as CEL defines, in either order") {
    expectMatch(R"(false && device.attributes["dra.example.com"].missing)", false, d);
    expectMatch(R"(device.attributes["dra.example.com"].missing && false)", false, d);
    expectMatch(R"(true || device.attributes["dra.example.com"].missing)", true, d);
    expectMatch(R"(device.attributes["dra.example.com"].missing || true)", true, d);
    expectMatchError(R"(true && device.attributes["dra.example.com"].missing)", "no such key", d);
    expectMatchError(R"(device.attributes["dra.example.com"].missing || false)", "no such key", d);
  }
  SECTION("a non-bool result is an error") {
    expectMatchError(R"(device.attributes["dra.example.com"].name)",
                     "CEL result of type string could not be converted to bool", d);
  }
  SECTION("runtime type mismatches on dyn values") {
    expectMatchError(R"(device.attributes["dra.example.com"].name > 1)", "no such overload", d);
    expectMatch(R"(device.attributes["dra.example.com"].name == 1)", false, d);  // heterogeneous ==
    expectMatch(R"(device.attributes["dra.example.com"].n == 5.0)", true, d);
    expectMatch(R"(device.attributes["dra.example.com"].n < 5.5)", true, d);
  }
  SECTION("arithmetic errors") {
    expectMatchError("9223372036854775807 + 1 > 0", "integer overflow");
    expectMatchError("-9223372036854775808 - 1 < 0", "integer overflow");
    expectMatchError("1 / 0 == 1", "division by zero");
    expectMatchError("1 % 0 == 1", "modulus by zero");
    expectMatchError("18446744073709551615u + 1u > 0u", "unsigned integer overflow");
    expectMatch("-9223372036854775808 < 0", true);
  }
  SECTION("list index out of range") { expectMatchError("[1, 2][2] == 1", "out of range"); }
}

TEST_CASE("Static type errors are compile errors", "[cel]") {
  expectCompileError(R"("a" == 1)",
                     "found no matching overload for '_==_' applied to '(string, int)'");
  expectCompileError(R"(device.driver > 1)", "found no matching overload for '_>_'");
  expectCompileError("1 + 1u == 2", "found no matching overload for '_+_'");
  expectCompileError("1 == 1.0", "found no matching overload for '_==_'");
  expectCompileError("device.nosuchfield == 1", "undefined field 'nosuchfield'");
  expectCompileError("foo.bar", "undeclared reference to 'foo'");
  expectCompileError("nosuchfn(1)", "undeclared reference to 'nosuchfn'");
  expectCompileError(R"("abc".startsWith(1))", "found no matching overload for 'startsWith'");
  expectCompileError("[1, 'a'] == [1]", "expected type 'int' but found 'string'");
  expectCompileError(R"(device.driver.x == "a")", "does not support field selection");
  expectCompileError(R"(device.driver + 1 == "a")", "found no matching overload for '_+_'");
  expectCompileError(R"("a".matches("(") )", "invalid matches argument");
  expectCompileError("device",
                     "must evaluate to bool or the unknown type, not kubernetes.DRADevice");
  expectCompileError(R"(quantity("1") < quantity("2"))", "found no matching overload for '_<_'");
  expectCompileError("has(device)", "invalid argument to has() macro");
  expectCompileError("true ? 1 : 'a'", "found no matching overload for '_?_:_'");
  expectCompileError("1.exists(x, true)", "cannot be range of a comprehension");
}

TEST_CASE("Syntax errors carry line and 1-based column", "[cel]") {
  CHECK_THAT(selectorError("?!"),
             Catch::StartsWith("compilation failed: ERROR: <input>:1:1: Syntax error"));
  CHECK_THAT(selectorError(R"(device.driver == )"), Catch::Contains("<input>:1:18: Syntax error"));
  CHECK_THAT(selectorError(R"(device.driver = "a")"),
             Catch::Contains("<input>:1:15: Syntax error"));
  CHECK_THAT(selectorError("true &&\n  device.driver == \"a\" &&\n  )"),
             Catch::Contains("<input>:3:3: Syntax error"));
  CHECK_THAT(selectorError(R"("unterminated)"), Catch::Contains("<input>:1:1: Syntax error"));
  CHECK_THAT(selectorError(R"("\q" == "")"), Catch::Contains("invalid escape sequence"));
  CHECK_THAT(selectorError("while == 1"), Catch::Contains("reserved identifier"));
  CHECK_THAT(selectorError(R"("héllo" == x)"),
             Catch::Contains("<input>:1:12: undeclared reference"));
  CHECK_THAT(selectorError("{'a': 1}.size() == 1"),
             Catch::Contains("map literals are not supported"));
  // The caret line points at the column.
  CHECK_THAT(selectorError("1 +"), Catch::EndsWith("\n | 1 +\n | ...^"));
}

TEST_CASE("Hostile input is rejected at compile time", "[cel]") {
  SECTION("deep parenthesis nesting") {
    const std::string expr = std::string(5000, '(') + "true" + std::string(5000, ')');
    CHECK_THAT(selectorError(expr), Catch::Contains("nesting exceeds the maximum depth of 100"));
  }
  SECTION("deep unary chains") {
    CHECK_THAT(selectorError(std::string(500, '!') + "true"), Catch::Contains("nesting exceeds"));
    CHECK_THAT(selectorError(std::string(3000, '-') + "1 == 1"),
               Catch::Contains("nesting exceeds"));
  }
  SECTION("deep list and call nesting") {
    std::string expr;
    for (int i = 0; i < 2000; ++i) expr += "[";
    CHECK_THAT(selectorError(expr), Catch::Contains("nesting exceeds"));
    std::string calls;
    for (int i = 0; i < 2000; ++i) calls += "size(";
    CHECK_THAT(selectorError(calls), Catch::Contains("nesting exceeds"));
  }
  SECTION("long arithmetic chains") {
    std::string expr = "1";
    for (int i = 0; i < 1000; ++i) expr += " + 1";
    CHECK_THAT(selectorError(expr + " > 0"), Catch::Contains("nesting exceeds"));
  }
  SECTION("long conjunctions are balanced and fine") {
    std::string expr = "true";
    for (int i = 0; i < 400; ++i) expr += " && device.driver == \"\"";
    expectMatch(expr, true);
  }
  SECTION("too long") {
    const std::string expr = "true" + std::string(11000, ' ');
    CHECK_THAT(selectorError(expr), Catch::Contains("more than the maximum of 10240"));
  }
  SECTION("invalid UTF-8") {
    CHECK_THAT(selectorError("\"\xff\" == \"\""), Catch::Contains("not valid UTF-8"));
  }
  SECTION("regex limits") {
    expectCompileError(R"("a".matches("(a{1000}){1000}"))", "invalid matches argument");
    // Would backtrack exponentially in an ECMAScript engine.
    expectMatch(R"("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!".matches("^(a+)+$"))", false);
  }
}

TEST_CASE("Operators and functions", "[cel]") {
  const Device d = DeviceBuilder(kDriver)
                       .attr("model", std::string("H100-SXM"))
                       .attr("cores", std::int64_t{132})
                       .attr("v", version("12.4.1"))
                       .cap("memory", "80Gi")
                       .device;
  expectMatch(R"(device.attributes["dra.example.com"].model.startsWith("H100"))", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].model.endsWith("SXM"))", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].model.contains("100-"))", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].model.lowerAscii() == "h100-sxm")", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].model.upperAscii() == "H100-SXM")", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].model.matches("(?i)^h[0-9]+"))", true, d);
  expectMatch(R"(matches(device.attributes["dra.example.com"].model, "SXM\\z"))", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].model.size() == 8)", true, d);
  expectMatch(R"(size("héllo") == 5)", true);
  expectMatch(R"(device.attributes["dra.example.com"].model + "!" == "H100-SXM!")", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].cores * 2 - 4 == 260)", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].cores % 10 == 2 && 7 / 2 == 3)", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].cores in [64, 132])", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].model in ["A100", "H100"])", false, d);
  expectMatch(R"(device.attributes["dra.example.com"].v.major() == 12)", true, d);
  expectMatch(R"(device.attributes["dra.example.com"].v.compareTo(semver("12.4.0")) == 1)", true,
              d);
  expectMatch(R"(device.capacity["dra.example.com"].memory.compareTo(quantity("80Gi")) == 0)", true,
              d);
  expectMatch(
      R"(device.capacity["dra.example.com"].memory.isGreaterThan(quantity("40Gi").add(quantity("40Gi"))))",
      false, d);
  expectMatch(
      R"(device.capacity["dra.example.com"].memory.sub(quantity("1Gi")).isLessThan(quantity("80Gi")))",
      true, d);
  expectMatch(R"(device.capacity["dra.example.com"].memory == quantity("85899345920"))", true, d);
  expectMatch(R"(has(device.attributes["dra.example.com"].model))", true, d);
  expectMatch(R"(has(device.attributes["dra.example.com"].nothing))", false, d);
  expectMatch(
      R"(has(device.attributes["dra.example.com"].nothing) && device.attributes["dra.example.com"].nothing)",
      false, d);
  expectMatch(R"(has(device.capacity["other.example.com"].memory))", false, d);
  expectMatch(
      R"(device.attributes["dra.example.com"].cores > 100 ? device.driver == "dra.example.com" : false)",
      true, d);
  expectMatch(R"(size(device.attributes["dra.example.com"]) == 3 && device.attributes.size() == 1)",
              true, d);
  expectMatch("1u < 2u && 2.5 > 2 && -1 < 1u && 'a' < 'b' && false < true", true);
  expectMatch(R"(r'\d' == "\\d" && '''multi
line''' == "multi\nline" && "\x41\u00e9\101" == "Aé" + "A")",
              true);
  expectMatch("0x10 == 16 && 1e3 == 1000.0 && .5 == 0.5", true);
  expectMatch("[1, 2] + [3] == [1, 2, 3] && size([1, 2] + [3]) == 3", true);
  expectMatch("[1, 2, 3].map(x, x * 2) == [2, 4, 6] && [1, 2, 3].filter(x, x > 1).size() == 2",
              true);
  expectMatch("[1, 2, 3].exists(x, x == 2) && ![1, 2, 3].all(x, x < 3)", true);
  expectMatch("[1, 2, 3].map(x, x > 1, x * 10) == [20, 30]", true);
  expectMatch("cel.bind(x, 2, cel.bind(y, 3, x * y == 6))", true);
  expectMatch(R"(int("42") == 42 && uint(7) == 7u && double(1) == 1.0 && string(12) == "12")",
              true);
  expectMatch(
      R"(device.attributes.exists(dom, dom == "dra.example.com" && device.attributes[dom].cores > 1))",
      true, d);
  expectMatch("null == null", true);
}

TEST_CASE("Compile once, evaluate many; the cache keeps errors too", "[cel]") {
  ledger::cel::SelectorCache cache;
  const auto& a = cache.get(R"(device.driver == "gpu.example.com")");
  const auto& b = cache.get(R"(device.driver == "gpu.example.com")");
  CHECK(&a == &b);
  REQUIRE(a.selector.has_value());
  int matched = 0;
  for (int i = 0; i < 1000; ++i) {
    Device d;
    d.driver = i % 2 ? "gpu.example.com" : "nic.example.com";
    matched += a.selector->evaluate(d).matched ? 1 : 0;
  }
  CHECK(matched == 500);
  const auto& bad = cache.get("device.driver ==");
  CHECK_FALSE(bad.selector.has_value());
  CHECK_THAT(bad.error, Catch::Contains("Syntax error"));
  CHECK(&bad == &cache.get("device.driver =="));
}
