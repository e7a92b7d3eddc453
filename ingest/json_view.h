// A read-only view of a JSON value in simdjson's DOM that answers as the
// nlohmann::json value parsed from the same text would (internal to ingest/).
//
// Why: the projectors (project_*.cpp) used to read an nlohmann value built
// from simdjson's DOM for every ingested object; building and freeing that
// tree, a node and a string per member, was half of ingest's reading thread
// (docs/performance.md, "Ingest"). They now read the DOM through this view, so the
// projection must not notice the difference. What nlohmann would do and the
// view therefore does:
// - objects: a key's value is its last occurrence (nlohmann keeps the last
//   duplicate); items() lists members sorted by key bytewise (std::map's
//   order) with duplicates removed, and size() counts distinct keys;
// - integers: is_number_integer() for both signed and unsigned,
//   is_number_unsigned() for non-negative ones (nlohmann parses them as
//   unsigned), get<std::int64_t>() converts as static_cast;
// - dump(): nlohmann's compact text (simd_json.h writes it);
// - where the two parsers could disagree (negative zeros, escaped UTF-16
//   surrogates) ValueReader leaves the document to nlohmann (see
//   value_reader.cpp), and nlohmann values reach the view through
//   viewOfNlohmann(), which writes them out first.
// One deliberate difference: value(key, default) returns the default for a
// member that is not a string, where nlohmann throws type_error.
//
// Lifetime: a view points into the simdjson document that produced it and
// is valid until that parser parses again or is destroyed. Views are small
// values; copy them freely. Thread safety: as the document (read-only use
// from several threads is safe). Errors: never throws, except std::bad_alloc.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ledger::ingest {

class JsonView {
 public:
  explicit JsonView(simdjson::dom::element element) : element_(element) {}

  bool is_object() const { return type() == Type::OBJECT; }
  bool is_array() const { return type() == Type::ARRAY; }
  bool is_string() const { return type() == Type::STRING; }
  bool is_null() const { return type() == Type::NULL_VALUE; }
  bool is_boolean() const { return type() == Type::BOOL; }
  bool is_number_integer() const { return type() == Type::INT64 || type() == Type::UINT64; }
  bool is_number_unsigned() const;
  bool is_number_float() const { return type() == Type::DOUBLE; }

  // The value as T: std::string, std::string_view (into the document),
  // std::int64_t, std::uint64_t, double or bool. Call only after checking the
  // type (as with nlohmann, a mismatch is the caller's bug; here it gives a
  // zero value instead of throwing).
  template <typename T>
  T get() const;

  // Elements of an array, distinct keys of an object, 0 for null, else 1.
  std::size_t size() const;
  bool empty() const { return size() == 0; }
  // nlohmann::json::dump() of the value: compact, keys sorted.
  std::string dump() const;

  // Member `key` (its last occurrence) of an object; nullopt when absent or
  // when this is not an object.
  std::optional<JsonView> find(std::string_view key) const;
  // The member `key` if it is a string, else `fallback`.
  std::string value(std::string_view key, std::string fallback) const;
  // An object's members in nlohmann's order (see above); empty for others.
  // Keys point into the document and are NUL-terminated.
  std::vector<std::pair<std::string_view, JsonView>> items() const;

  // Range-for over an array's elements; an empty range for anything else.
  class ArrayIterator {
   public:
    ArrayIterator() = default;  // the end of an empty range
    explicit ArrayIterator(simdjson::dom::array::iterator it) : it_(it) {}
    JsonView operator*() const { return JsonView(**it_); }
    ArrayIterator& operator++() {
      ++*it_;
      return *this;
    }
    bool operator!=(const ArrayIterator& other) const {
      return it_.has_value() && other.it_.has_value() && *it_ != *other.it_;
    }

   private:
    std::optional<simdjson::dom::array::iterator> it_;
  };
  ArrayIterator begin() const;
  ArrayIterator end() const;

  simdjson::dom::element element() const { return element_; }

 private:
  using Type = simdjson::dom::element_type;
  Type type() const { return element_.type(); }

  simdjson::dom::element element_;
};

template <>
std::string_view JsonView::get<std::string_view>() const;
template <>
std::string JsonView::get<std::string>() const;
template <>
std::int64_t JsonView::get<std::int64_t>() const;
template <>
std::uint64_t JsonView::get<std::uint64_t>() const;
template <>
double JsonView::get<double>() const;
template <>
bool JsonView::get<bool>() const;

// A view of an nlohmann value, through a parser the caller owns (the view
// lives as long as the parser's document): the value is written out with
// dump() and parsed by simdjson, which is exact for anything nlohmann
// writes. Strings that are not valid UTF-8 (possible only for values not
// parsed from JSON, e.g. from YAML) are written with U+FFFD in their place.
// Throws std::runtime_error if simdjson rejects the text (nesting deeper
// than simdjson's limit).
JsonView viewOfNlohmann(const nlohmann::json& value, simdjson::dom::parser& parser);

}  // namespace ledger::ingest
