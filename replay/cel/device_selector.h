// CEL device selectors, as Kubernetes DRA evaluates them
// (k8s.io/dynamic-resource-allocation/cel).
//
// No C++ CEL library is packaged for Debian 12, so this is the project's own
// parser and type-checked evaluator for the subset DRA selectors use:
// `device.driver`, `device.allowMultipleAllocations`,
// `device.attributes[domain][id]`, `device.capacity[domain][id]` (also `.id`
// field selection); int/uint/double/string/bool/null literals, list literals
// (no map literals, no bytes); == != < <= > >= && || ! - + * / % in ?:;
// has(); the all/exists/exists_one/map/filter macros and cel.bind; size,
// startsWith, endsWith, contains, matches, lowerAscii, upperAscii; int(),
// uint(), double(), string(); quantity(), isQuantity(), sign(), compareTo,
// isGreaterThan, isLessThan, add, sub, asInteger, isInteger,
// asApproximateFloat; semver(), isSemver() (with the normalize flag), major,
// minor, patch; and DRA's includes(). Not supported (compile errors): other
// cel-go extension functions (split, find, replace, format, lists/sets/ip
// libraries...), timestamps/durations, optional types.
//
// Semantics mirror cel-go as Kubernetes configures it: errors are values that
// && and || absorb in either order; int/uint overflow and division by zero are
// errors; numbers compare across int/uint/double but never mix in arithmetic;
// == is heterogeneous (1 == "a" on dyn values is false). Kubernetes' rules: a
// missing attribute or capacity id is an evaluation error ("no such key: id"),
// not false, while an unknown domain reads as an empty map; a selector must
// produce a bool. Attribute values are typed dyn, so what can be checked
// statically is (compile error), the rest fails at evaluation.
//
// matches() uses RE2, the syntax and semantics of cel-go's Go regexp (see
// regex.h). Known differences: quantity.isInteger()/asInteger() answer by
// value, whereas upstream's answer also depends on the internal
// representation (it says false for "1000m" or "1.5Gi"); quantities beyond
// 128-bit nanos are rejected; the runtime cost limit counts evaluated nodes
// and sized work, not cel-go's exact cost units. Limits (cel_limits.h): 10 KiB expressions,
// nesting depth 100, cost 1e6.
//
// Thread safety: a compiled DeviceSelector is immutable and may be evaluated
// from several threads; SelectorCache is not thread-safe (one per replay).
// Errors: compile problems are returned (tryCompile) as k8s' CompilationResult
// Error.Detail: "compilation failed: ERROR: <input>:line:column: message" (a
// cel-go issue, 1-based column), or compile.go's own plain message such as
// "must evaluate to bool or the unknown type, not int"; evaluation problems
// are returned in EvalResult; nothing here throws for bad expressions.
#pragma once

#include <boost/container/flat_map.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "schema/k8s/quantity.h"

namespace ledger::cel {

// A semantic version attribute (resource.k8s.io DeviceAttribute.version).
struct Semver {
  std::int64_t major = 0;
  std::int64_t minor = 0;
  std::int64_t patch = 0;
  std::string prerelease;  // without '-'; empty when none
  std::string build;       // without '+'; ignored for ordering
};

// Orders by semver precedence (build metadata ignored).
int compareSemver(const Semver& a, const Semver& b);
std::optional<Semver> parseSemver(std::string_view text);

using AttributeValue = std::variant<bool, std::int64_t, std::string, Semver>;

// The device as a selector sees it. Names are already split into domain and
// id: a slice's unqualified attribute "model" of driver "gpu.example.com" is
// attributes["gpu.example.com"]["model"].
// Sorted vectors, not node maps: a report builds these for every published
// device (4,096 on the simulated cluster, about ten attributes each), and
// the node per entry was most of that.
using AttributeMap = boost::container::flat_map<std::string, AttributeValue, std::less<>>;
using CapacityMap = boost::container::flat_map<std::string, Quantity, std::less<>>;
using AttributeDomains = boost::container::flat_map<std::string, AttributeMap, std::less<>>;
using CapacityDomains = boost::container::flat_map<std::string, CapacityMap, std::less<>>;

struct Device {
  std::string driver;
  AttributeDomains attributes;
  CapacityDomains capacity;
  // resource.k8s.io Device.allowMultipleAllocations (DRAConsumableCapacity);
  // unset in the API reads as false, as k8s' DeviceMatches does.
  bool allowMultipleAllocations = false;
};

struct EvalResult {
  bool matched = false;
  std::string error;  // non-empty: evaluation failed; `matched` is then false
  bool ok() const { return error.empty(); }
};

class DeviceSelector {
 public:
  // Parses and type-checks `expression`. On failure returns nullopt and, when
  // `error` is given, a message with the column of the problem.
  static std::optional<DeviceSelector> tryCompile(std::string_view expression,
                                                  std::string* error = nullptr);

  EvalResult evaluate(const Device& device) const;
  const std::string& expression() const;

  struct Node;  // the compiled expression tree (private to the implementation)

 private:
  DeviceSelector(std::string expression, std::shared_ptr<const Node> root);
  std::string expression_;
  std::shared_ptr<const Node> root_;
};

// Compiles each distinct expression once. Returned pointers stay valid for
// the cache's lifetime; a compile error is cached too and returned each time.
class SelectorCache {
 public:
  struct Entry {
    std::optional<DeviceSelector> selector;
    std::string error;  // set when selector is empty
  };
  const Entry& get(std::string_view expression);

 private:
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;
};

}  // namespace ledger::cel
