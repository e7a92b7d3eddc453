#include "ingest/json_view.h"

#include <algorithm>
#include <stdexcept>

#include "ingest/simd_json.h"

namespace ledger::ingest {

bool JsonView::is_number_unsigned() const {
  if (type() == Type::UINT64) return true;
  return type() == Type::INT64 && std::int64_t(element_) >= 0;
}

template <>
std::string_view JsonView::get<std::string_view>() const {
  std::string_view s;
  return element_.get(s) == simdjson::SUCCESS ? s : std::string_view();
}

template <>
std::string JsonView::get<std::string>() const {
  return std::string(get<std::string_view>());
}

template <>
std::int64_t JsonView::get<std::int64_t>() const {
  switch (type()) {
    case Type::INT64:
      return std::int64_t(element_);
    case Type::UINT64:
      return static_cast<std::int64_t>(std::uint64_t(element_));
    case Type::DOUBLE:
      return static_cast<std::int64_t>(double(element_));
    default:
      return 0;
  }
}

template <>
std::uint64_t JsonView::get<std::uint64_t>() const {
  switch (type()) {
    case Type::INT64:
      return static_cast<std::uint64_t>(std::int64_t(element_));
    case Type::UINT64:
      return std::uint64_t(element_);
    case Type::DOUBLE:
      return static_cast<std::uint64_t>(double(element_));
    default:
      return 0;
  }
}

template <>
double JsonView::get<double>() const {
  switch (type()) {
    case Type::INT64:
      return static_cast<double>(std::int64_t(element_));
    case Type::UINT64:
      return static_cast<double>(std::uint64_t(element_));
    case Type::DOUBLE:
      return double(element_);
    default:
      return 0;
  }
}

template <>
bool JsonView::get<bool>() const {
  return type() == Type::BOOL && bool(element_);
}

std::size_t JsonView::size() const {
  switch (type()) {
    case Type::ARRAY:
      return simdjson::dom::array(element_).size();
    case Type::OBJECT:
      return items().size();
    case Type::NULL_VALUE:
      return 0;
    default:
      return 1;
  }
}

std::string JsonView::dump() const {
  std::string out;
  appendStoredJson(element_, JsonRole::kPlain, out);
  return out;
}

std::optional<JsonView> JsonView::find(std::string_view key) const {
  if (!is_object()) return std::nullopt;
  std::optional<JsonView> found;
  for (auto [k, v] : simdjson::dom::object(element_)) {
    if (k == key) found = JsonView(v);
  }
  return found;
}

std::string JsonView::value(std::string_view key, std::string fallback) const {
  const std::optional<JsonView> v = find(key);
  return v && v->is_string() ? v->get<std::string>() : std::move(fallback);
}

std::vector<std::pair<std::string_view, JsonView>> JsonView::items() const {
  std::vector<std::pair<std::string_view, JsonView>> out;
  if (!is_object()) return out;
  const simdjson::dom::object object(element_);
  out.reserve(object.size());
  for (auto [k, v] : object) out.emplace_back(k, JsonView(v));
  // Stable: of equal keys the last in the document stays last, and wins.
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  auto last = std::unique(out.rbegin(), out.rend(),
                          [](const auto& a, const auto& b) { return a.first == b.first; });
  out.erase(out.begin(), last.base());
  return out;
}

JsonView::ArrayIterator JsonView::begin() const {
  if (!is_array()) return ArrayIterator();
  return ArrayIterator(simdjson::dom::array(element_).begin());
}

JsonView::ArrayIterator JsonView::end() const {
  if (!is_array()) return ArrayIterator();
  return ArrayIterator(simdjson::dom::array(element_).end());
}

JsonView viewOfNlohmann(const nlohmann::json& value, simdjson::dom::parser& parser) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  simdjson::dom::element root;
  if (auto error = parser.parse(text).get(root); error != simdjson::SUCCESS) {
    throw std::runtime_error(std::string("JSON value not readable by simdjson: ") +
                             simdjson::error_message(error));
  }
  return JsonView(root);
}

}  // namespace ledger::ingest
