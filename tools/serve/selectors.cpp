#include "tools/serve/selectors.h"

#include <cctype>

#include "tools/serve/api_error.h"

namespace ledger::serve {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits on commas outside parentheses (`k in (a,b)` is one requirement).
std::vector<std::string_view> splitTerms(std::string_view text, const char* what) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')') --depth;
    if (depth < 0 || depth > 1) {
      throw ApiError::badRequest(std::string(what) + " '" + std::string(text) +
                                 "': unbalanced parentheses");
    }
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (depth != 0) {
    throw ApiError::badRequest(std::string(what) + " '" + std::string(text) +
                               "': unbalanced parentheses");
  }
  return out;
}

bool validKey(std::string_view key) {
  if (key.empty() || key.size() > 316) return false;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != '/') {
      return false;
    }
  }
  return true;
}

}  // namespace

LabelSelector LabelSelector::parse(std::string_view text) {
  LabelSelector selector;
  if (trim(text).empty()) return selector;
  for (std::string_view term : splitTerms(text, "labelSelector")) {
    const auto bad = [&](const std::string& why) {
      return ApiError::badRequest("labelSelector '" + std::string(text) + "': '" +
                                  std::string(term) + "' " + why);
    };
    Requirement r;
    if (term.starts_with("!")) {
      r.key = std::string(trim(term.substr(1)));
      r.op = Op::kDoesNotExist;
    } else if (auto p = term.find("!="); p != std::string_view::npos) {
      r.key = std::string(trim(term.substr(0, p)));
      r.op = Op::kNotEquals;
      r.values.emplace_back(trim(term.substr(p + 2)));
    } else if (auto q = term.find('='); q != std::string_view::npos) {
      r.key = std::string(trim(term.substr(0, q)));
      r.op = Op::kEquals;
      std::string_view value = term.substr(q + 1);
      if (value.starts_with("=")) value.remove_prefix(1);
      r.values.emplace_back(trim(value));
    } else if (auto open = term.find('('); open != std::string_view::npos) {
      std::string_view head = trim(term.substr(0, open));
      if (!term.ends_with(")")) throw bad("has no closing parenthesis");
      const auto space = head.find_last_of(" \t");
      if (space == std::string_view::npos) throw bad("needs 'in' or 'notin'");
      const std::string_view op = trim(head.substr(space + 1));
      r.key = std::string(trim(head.substr(0, space)));
      if (op == "in") {
        r.op = Op::kIn;
      } else if (op == "notin") {
        r.op = Op::kNotIn;
      } else {
        throw bad("has an unknown operator '" + std::string(op) + "'");
      }
      const std::string_view inner = term.substr(open + 1, term.size() - open - 2);
      for (std::string_view v : splitTerms(inner, "labelSelector")) r.values.emplace_back(v);
    } else {
      r.key = std::string(term);
      r.op = Op::kExists;
    }
    if (!validKey(r.key)) throw bad("has no valid label key");
    selector.requirements_.push_back(std::move(r));
  }
  return selector;
}

bool LabelSelector::matches(const nlohmann::json& labels) const {
  for (const auto& r : requirements_) {
    const bool has = labels.is_object() && labels.contains(r.key) && labels[r.key].is_string();
    const std::string value = has ? labels[r.key].get<std::string>() : std::string();
    auto in = [&] {
      for (const auto& v : r.values) {
        if (v == value) return true;
      }
      return false;
    };
    switch (r.op) {
      case Op::kEquals:
      case Op::kIn:
        if (!has || !in()) return false;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        if (has && in()) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kDoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

FieldSelector FieldSelector::parse(std::string_view text) {
  FieldSelector selector;
  if (trim(text).empty()) return selector;
  for (std::string_view term : splitTerms(text, "fieldSelector")) {
    Term t;
    std::size_t opAt = term.find("!=");
    std::size_t opLen = 2;
    t.equals = opAt == std::string_view::npos;
    if (t.equals) {
      opAt = term.find('=');
      opLen = term.substr(opAt == std::string_view::npos ? 0 : opAt).starts_with("==") ? 2 : 1;
    }
    if (opAt == std::string_view::npos) {
      throw ApiError::badRequest("fieldSelector '" + std::string(text) + "': '" +
                                 std::string(term) + "' is not FIELD=VALUE");
    }
    const std::string_view field = trim(term.substr(0, opAt));
    if (field == "metadata.name") {
      t.name = true;
    } else if (field == "metadata.namespace") {
      t.name = false;
    } else {
      throw ApiError::badRequest("fieldSelector '" + std::string(text) + "': field label \"" +
                                 std::string(field) +
                                 "\" not supported (metadata.name, metadata.namespace)");
    }
    t.value = std::string(trim(term.substr(opAt + opLen)));
    selector.terms_.push_back(std::move(t));
  }
  return selector;
}

bool FieldSelector::matches(std::string_view ns, std::string_view name) const {
  for (const auto& t : terms_) {
    const std::string_view actual = t.name ? name : ns;
    if ((actual == t.value) != t.equals) return false;
  }
  return true;
}

}  // namespace ledger::serve
