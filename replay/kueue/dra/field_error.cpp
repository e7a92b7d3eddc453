#include "replay/kueue/dra/field_error.h"

#include <nlohmann/json.hpp>

namespace ledger::replay::dra {

FieldError FieldError::invalid(std::string field, std::optional<std::string> value,
                               std::string detail) {
  FieldError e;
  e.type = Type::kInvalid;
  e.field = std::move(field);
  e.badValue = std::move(value);
  e.detail = std::move(detail);
  return e;
}

FieldError FieldError::notFound(std::string field, std::string value) {
  FieldError e;
  e.type = Type::kNotFound;
  e.field = std::move(field);
  e.badValue = std::move(value);
  return e;
}

FieldError FieldError::internal(std::string field, std::string detail) {
  FieldError e;
  e.type = Type::kInternal;
  e.field = std::move(field);
  e.detail = std::move(detail);
  return e;
}

std::string FieldError::render() const {
  // Controller-level messages (e.g. direct ResourceClaims) carry no field.
  if (field.empty()) return detail;
  std::string body;
  if (type == Type::kInternal) {
    body = "Internal error";
  } else {
    body = type == Type::kNotFound ? "Not found: " : "Invalid value: ";
    // JSON string quoting matches Go's %q for the ASCII text these carry.
    body += badValue ? nlohmann::json(*badValue).dump() : "null";
  }
  if (!detail.empty()) body += ": " + detail;
  return field + ": " + body;
}

std::string indexed(const std::string& base, std::size_t index) {
  return base + "[" + std::to_string(index) + "]";
}

std::string apiNotFound(const std::string& resource, const std::string& name) {
  return resource + " \"" + name + "\" not found";
}

}  // namespace ledger::replay::dra
