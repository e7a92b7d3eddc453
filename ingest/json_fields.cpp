#include "json_fields.h"

namespace ledger::ingest {

const Json* FieldReader::member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

const Json* FieldReader::path(const Json& obj, std::initializer_list<const char*> keys) {
  const Json* cur = &obj;
  for (const char* k : keys) {
    cur = member(*cur, k);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

std::string FieldReader::string(const Json& obj, const char* key, const char* where) {
  const Json* v = member(obj, key);
  if (v == nullptr) return {};
  if (!v->is_string()) {
    problem(std::string(where) + "." + key + " is not a string");
    return {};
  }
  return v->get<std::string>();
}

std::int64_t FieldReader::integer(const Json& obj, const char* key, const char* where,
                                  std::int64_t dflt) {
  const Json* v = member(obj, key);
  if (v == nullptr) return dflt;
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_number_unsigned()) return static_cast<std::int64_t>(v->get<std::uint64_t>());
  problem(std::string(where) + "." + key + " is not an integer");
  return dflt;
}

bool FieldReader::boolean(const Json& obj, const char* key, const char* where, bool dflt) {
  const Json* v = member(obj, key);
  if (v == nullptr) return dflt;
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

const Json* FieldReader::object(const Json& obj, const char* key, const char* where) {
  const Json* v = member(obj, key);
  if (v != nullptr && !v->is_object()) {
    problem(std::string(where) + "." + key + " is not an object");
    return nullptr;
  }
  return v;
}

const Json* FieldReader::array(const Json& obj, const char* key, const char* where) {
  const Json* v = member(obj, key);
  if (v != nullptr && !v->is_array()) {
    problem(std::string(where) + "." + key + " is not a list");
    return nullptr;
  }
  return v;
}

}  // namespace ledger::ingest
