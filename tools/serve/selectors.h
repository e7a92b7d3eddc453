// Kubernetes list selectors, as the API server reads them.
// labelSelector (apimachinery labels.Parse): comma-separated requirements
// `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`.
// fieldSelector (fields.ParseSelector), on the fields every resource
// supports: metadata.name and metadata.namespace with `=`, `==`, `!=`.
//
// Value types; const methods are thread-safe. Errors: parse throws ApiError
// (400) naming the selector and what is wrong with it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ledger::serve {

class LabelSelector {
 public:
  static LabelSelector parse(std::string_view text);
  bool empty() const { return requirements_.empty(); }
  // `labels`: an object's metadata.labels (null or an object).
  bool matches(const nlohmann::json& labels) const;

 private:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Op op;
    std::vector<std::string> values;
  };
  std::vector<Requirement> requirements_;
};

class FieldSelector {
 public:
  static FieldSelector parse(std::string_view text);
  bool empty() const { return terms_.empty(); }
  bool matches(std::string_view ns, std::string_view name) const;

 private:
  struct Term {
    bool name;  // metadata.name, else metadata.namespace
    bool equals;
    std::string value;
  };
  std::vector<Term> terms_;
};

}  // namespace ledger::serve
