#include "ingest/json_fields.h"

#include <charconv>
#include "ingest/json_numbers.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::ingest {

JsonPtr FieldReader::member(const Json& obj, const char* key) {
  JsonPtr found = obj.find(key);
  if (found && found->is_null()) return std::nullopt;
  return found;
}

JsonPtr FieldReader::path(const Json& obj, std::initializer_list<const char*> keys) {
  JsonPtr cur = obj;
  for (const char* k : keys) {
    cur = member(*cur, k);
    if (!cur) return std::nullopt;
  }
  return cur;
}

std::string FieldReader::string(const Json& obj, const char* key, const char* where) {
  const JsonPtr v = member(obj, key);
  if (!v) return {};
  if (!v->is_string()) {
    problem(std::string(where) + "." + key + " is not a string");
    return {};
  }
  return v->get<std::string>();
}

std::optional<std::int64_t> FieldReader::integerValue(const Json& value, const std::string& where,
                                                      int bits, bool* outOfRange) {
  *outOfRange = false;
  const std::int64_t max = bits == 32 ? INT32_MAX : INT64_MAX;
  const std::int64_t min = bits == 32 ? INT32_MIN : INT64_MIN;
  std::string text;
  if (value.is_number_unsigned()) {
    const std::uint64_t v = value.get<std::uint64_t>();
    if (v <= static_cast<std::uint64_t>(max)) return static_cast<std::int64_t>(v);
    text = std::to_string(v);
  } else if (value.is_number_integer()) {
    const std::int64_t v = value.get<std::int64_t>();
    if (v >= min && v <= max) return v;
    text = std::to_string(v);
  } else if (value.is_string() && isIntegerLiteral(value.get<std::string_view>())) {
    // Digits that do not fit int64 are how an integer beyond 64 bits reads
    // (json_numbers.h); digits that do are a quoted number, not an integer.
    const std::string_view digits = value.get<std::string_view>();
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc::result_out_of_range) return std::nullopt;
    text = std::string(digits);
  } else {
    return std::nullopt;
  }
  *outOfRange = true;
  reject(where + " " + text + " is outside the int" + std::to_string(bits) + " range");
  return std::nullopt;
}

std::int64_t FieldReader::integer(const Json& obj, const char* key, const char* where,
                                  std::int64_t dflt, int bits) {
  const JsonPtr v = member(obj, key);
  if (!v) return dflt;
  const std::string at = std::string(where) + "." + key;
  bool outOfRange = false;
  if (std::optional<std::int64_t> i = integerValue(*v, at, bits, &outOfRange)) return *i;
  if (!outOfRange) problem(at + " is not an integer");
  return dflt;
}

std::optional<std::int64_t> FieldReader::time(const Json& obj, const char* key, const char* where) {
  const std::string text = string(obj, key, where);
  if (text.empty()) return std::nullopt;
  bool outOfRange = false;
  std::optional<std::int64_t> t = tryParseRfc3339(text, &outOfRange);
  if (outOfRange) {
    reject(std::string(where) + "." + key + " '" + text + "' is outside the ledger's time range " +
           timeRangeText());
  }
  return t;
}

bool FieldReader::boolean(const Json& obj, const char* key, const char* where, bool dflt) {
  const JsonPtr v = member(obj, key);
  if (!v) return dflt;
  if (v->is_boolean()) return v->get<bool>();
  problem(std::string(where) + "." + key + " is not a boolean");
  return dflt;
}

std::string FieldReader::quantityText(const Json& value, const std::string& where) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_float()) return value.dump();
  problem(where + " is not a quantity");
  return "<invalid>";
}

JsonPtr FieldReader::object(const Json& obj, const char* key, const char* where) {
  JsonPtr v = member(obj, key);
  if (v && !v->is_object()) {
    problem(std::string(where) + "." + key + " is not an object");
    return std::nullopt;
  }
  return v;
}

JsonPtr FieldReader::array(const Json& obj, const char* key, const char* where) {
  JsonPtr v = member(obj, key);
  if (v && !v->is_array()) {
    problem(std::string(where) + "." + key + " is not a list");
    return std::nullopt;
  }
  return v;
}

}  // namespace ledger::ingest
