#include "yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <regex>
#include <set>
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

// YAML 1.2 section 3.2.1.1: "The content of a mapping node is an unordered
// set of key/value node pairs, with the restriction that each of the keys is
// unique." yaml-cpp 0.7 keeps both pairs and answers lookups with the first,
// so an unchecked conversion would keep the last value of each key: what
// several objects printed without `---` between them turn into, one object
// silently standing for all of them.
YAML::ParserException duplicateKey(const YAML::Node& key) {
  return YAML::ParserException(key.Mark(), "duplicate mapping key \"" + key.Scalar() + "\"");
}

}  // namespace

void checkUniqueKeys(const YAML::Node& node) {
  if (node.IsSequence()) {
    for (const auto& item : node) checkUniqueKeys(item);
  } else if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second) {
        throw duplicateKey(kv.first);
      }
      checkUniqueKeys(kv.first);
      checkUniqueKeys(kv.second);
    }
  }
}

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
        const auto [at, inserted] = obj.emplace(kv.first.Scalar(), nullptr);
        if (!inserted) throw duplicateKey(kv.first);
        at.value() = yamlToJson(kv.second);
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
