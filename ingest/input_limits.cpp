#include "ingest/input_limits.h"

#include <simdjson.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace ledger::ingest {

std::optional<std::size_t> nestingTooDeepAt(std::string_view json, std::size_t maxDepth) {
  std::size_t depth = 0;
  bool inString = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (inString) {
      if (c == '\\') {
        ++i;  // the escaped byte cannot end the string
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      if (++depth > maxDepth) return i;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

bool nestedDeeperThan(const nlohmann::json& value, std::size_t maxDepth) {
  std::vector<std::pair<const nlohmann::json*, std::size_t>> stack{{&value, 1}};
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    if (depth > maxDepth) return true;
    for (const auto& child : *node) stack.emplace_back(&child, depth + 1);
  }
  return false;
}

std::string identityValueProblem(std::string_view value) {
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7F) {
      char code[8];
      std::snprintf(code, sizeof code, "%04X", c);
      return "holds the control character U+" + std::string(code) + " at byte " + std::to_string(i);
    }
  }
  if (!simdjson::validate_utf8(value.data(), value.size())) return "is not valid UTF-8";
  return {};
}

}  // namespace ledger::ingest
