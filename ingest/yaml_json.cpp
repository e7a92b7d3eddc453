#include "yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <regex>
#include <stdexcept>
#include <string>

namespace ledger::ingest {

namespace {

nlohmann::json plainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(s, kInt)) {
    std::int64_t v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
    return s;  // out of int64 range: keep the text (quantities stay exact)
  }
  if (std::regex_match(s, kFloat)) {
    // Kept as a JSON number parsed from the same text so it prints back alike.
    try {
      return nlohmann::json::parse(s[0] == '+' ? s.substr(1) : (s[0] == '.' ? "0" + s : s));
    } catch (const nlohmann::json::exception&) {
      return s;
    }
  }
  return s;
}

}  // namespace

nlohmann::json yamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      // yaml-cpp tags non-plain (quoted, block) scalars "!"; those are strings.
      if (node.Tag() == "!") return node.Scalar();
      return plainScalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& item : node) arr.push_back(yamlToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      nlohmann::json obj = nlohmann::json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) throw std::invalid_argument("mapping key is not a scalar");
        obj[kv.first.Scalar()] = yamlToJson(kv.second);
      }
      return obj;
    }
  }
  return nullptr;
}

nlohmann::json parseYamlDocument(std::string_view text) {
  return yamlToJson(YAML::Load(std::string(text)));
}

}  // namespace ledger::ingest
