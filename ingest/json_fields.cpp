#include "ingest/json_fields.h"

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

std::int64_t FieldReader::integer(const Json& obj, const char* key, const char* where,
                                  std::int64_t dflt) {
  const JsonPtr v = member(obj, key);
  if (!v) return dflt;
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_number_unsigned()) return static_cast<std::int64_t>(v->get<std::uint64_t>());
  problem(std::string(where) + "." + key + " is not an integer");
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
