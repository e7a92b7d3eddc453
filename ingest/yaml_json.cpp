#include "ingest/yaml_json.h"

#include <simdjson.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingest/input_limits.h"

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
// JSON text is Unicode (RFC 8259, 8.1): a string that is not UTF-8 cannot
// be stored (nlohmann's dump() throws on it). ValueReader checks the
// document's bytes, but yaml-cpp makes other bytes than it read: escapes
// ("\x83") and its guess of UTF-16/32 from NUL bytes in the stream.
const std::string& utf8(const YAML::Node& scalar) {
  const std::string& s = scalar.Scalar();
  if (!simdjson::validate_utf8(s.data(), s.size()))
    throw YAML::ParserException(scalar.Mark(), "scalar is not valid UTF-8");
  return s;
}

YAML::ParserException duplicateKey(const YAML::Node& key) {
  return YAML::ParserException(key.Mark(), "duplicate mapping key \"" + key.Scalar() + "\"");
}

// go-yaml (gopkg.in/yaml.v2 2.2.8+, yaml.v3), the decoder behind
// sigs.k8s.io/yaml and so behind kubectl and the API server, refuses
// "excessive aliasing": once more than 100 nodes were decoded through aliases
// and more than 1000 in all, the share decoded through aliases may be at
// most 99% up to 400,000 nodes, falling linearly to 10% at 4,000,000. The
// same rule here accepts what Kubernetes accepts.
double allowedAliasRatio(std::uint64_t decoded) {
  constexpr double kLow = 400000, kHigh = 4000000;
  const auto d = static_cast<double>(decoded);
  if (d <= kLow) return 0.99;
  if (d >= kHigh) return 0.10;
  return 0.99 - 0.89 * (d - kLow) / (kHigh - kLow);
}

// Totals, from the parser's events, what yamlToJson will build: events name
// each alias once, so this runs in time and memory of the document's text.
// The totals are running ones in document order, as go-yaml counts, and an
// anchored node's share is the difference between them across its events.
class ExpansionBudget : public YAML::EventHandler {
 public:
  explicit ExpansionBudget(const YamlLimits& limits) : limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, 0); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    leaf(mark, anchor, value.size());
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    // YAML 1.2, 3.2.2.2: an alias refers to the most recent preceding node
    // with that anchor; yaml-cpp also resolves one inside the node it names,
    // which would make the node graph a cycle and its conversion endless.
    if (it == anchors_.end())
      throw YAML::ParserException(mark, "alias refers to a node that contains it");
    const Share& share = it->second;
    nodes_ += 1 + share.nodes;
    aliased_ += share.nodes;
    bytes_ += 1 + share.bytes;
    check(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Share {
    std::uint64_t nodes = 0;
    std::uint64_t bytes = 0;
  };
  struct Open {
    YAML::anchor_t anchor;
    std::uint64_t nodes;  // running totals before the node
    std::uint64_t bytes;
  };

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, std::size_t size) {
    ++nodes_;
    bytes_ += 1 + size;
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Share{1, 1 + size};
    check(mark);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (open_.size() >= kMaxNestingDepth) {
      throw YAML::ParserException(
          mark, "nested deeper than " + std::to_string(kMaxNestingDepth) + " levels");
    }
    // A redefined anchor names the new node from here on (YAML 1.2, 3.2.2.2).
    if (anchor != YAML::NullAnchor) anchors_.erase(anchor);
    open_.push_back(Open{anchor, nodes_, bytes_});
    ++nodes_;
    ++bytes_;
    check(mark);
  }
  void close() {
    const Open top = open_.back();
    open_.pop_back();
    if (top.anchor != YAML::NullAnchor)
      anchors_[top.anchor] = Share{nodes_ - top.nodes, bytes_ - top.bytes};
  }
  void check(const YAML::Mark& mark) const {
    if (bytes_ > limits_.maxExpandedBytes) {
      throw YAML::ParserException(mark, "aliases expand the document past " +
                                            std::to_string(limits_.maxExpandedBytes) + " bytes");
    }
    if (aliased_ > 100 && nodes_ > 1000 &&
        static_cast<double>(aliased_) / static_cast<double>(nodes_) > allowedAliasRatio(nodes_)) {
      throw YAML::ParserException(mark, "document contains excessive aliasing (" +
                                            std::to_string(aliased_) + " of " +
                                            std::to_string(nodes_) + " nodes through aliases)");
    }
  }

  const YamlLimits& limits_;
  std::map<YAML::anchor_t, Share> anchors_;
  std::vector<Open> open_;
  std::uint64_t nodes_ = 0;    // nodes the conversion will build so far
  std::uint64_t aliased_ = 0;  // of which through aliases
  std::uint64_t bytes_ = 0;    // their scalars' bytes, plus one per node
};

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
      // yaml-cpp tags non-plain (quoted, block) scalars "!"; those are
      // strings, as is a scalar tagged !!str however it reads ("!!str 1").
      if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") return utf8(node);
      return plainScalar(utf8(node));
    case YAML::NodeType::Sequence: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& item : node) arr.push_back(yamlToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      nlohmann::json obj = nlohmann::json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) throw std::invalid_argument("mapping key is not a scalar");
        const auto [at, inserted] = obj.emplace(utf8(kv.first), nullptr);
        if (!inserted) throw duplicateKey(kv.first);
        at.value() = yamlToJson(kv.second);
      }
      return obj;
    }
  }
  return nullptr;
}

nlohmann::json parseYamlDocument(std::string_view text, const YamlLimits& limits) {
  std::string copy(text);
  {
    std::istringstream in(copy);
    YAML::Parser parser(in);
    ExpansionBudget budget(limits);
    parser.HandleNextDocument(budget);
  }
  return yamlToJson(YAML::Load(copy));
}

}  // namespace ledger::ingest
