#include "ingest/simd_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

namespace ledger::ingest {

JsonRole rootRole(simdjson::dom::element root) {
  if (root.type() != simdjson::dom::element_type::OBJECT) return JsonRole::kPlain;
  bool typeIsString = false, hasObject = false, kindIsList = false, itemsIsArray = false;
  for (auto [key, value] : simdjson::dom::object(root)) {
    if (key == "type") {
      typeIsString = value.is_string();
    } else if (key == "object") {
      hasObject = true;
    } else if (key == "kind") {
      std::string_view kind;
      kindIsList = value.get(kind) == simdjson::SUCCESS && kind.size() >= 4 &&
                   kind.substr(kind.size() - 4) == "List";
    } else if (key == "items") {
      itemsIsArray = value.is_array();
    }
  }
  if (typeIsString && hasObject) return JsonRole::kEvent;
  if (kindIsList && itemsIsArray) return JsonRole::kList;
  return JsonRole::kObject;
}

JsonRole memberRole(JsonRole parent, std::string_view key) {
  switch (parent) {
    case JsonRole::kObject:
      return key == "metadata" ? JsonRole::kMetadata : JsonRole::kPlain;
    case JsonRole::kEvent:
      return key == "object" ? JsonRole::kObject : JsonRole::kPlain;
    case JsonRole::kList:
      return key == "items" ? JsonRole::kList : JsonRole::kPlain;
    default:
      return JsonRole::kPlain;
  }
}

namespace {

// Whether any of the 8 bytes in `v` needs escaping: below 0x20, '"' or
// '\\' (the classic "has zero byte" bit trick, per condition).
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
bool needsEscape(std::uint64_t v) {
  const auto zeroByte = [](std::uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  const std::uint64_t below0x20 = (v - kOnes * 0x20) & ~v & kHighs;
  return (below0x20 | zeroByte(v ^ (kOnes * '"')) | zeroByte(v ^ (kOnes * '\\'))) != 0;
}

void appendString(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  // Most strings need no escape: find the first byte that does 8 at a time.
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t v;
    std::memcpy(&v, s.data() + i, 8);
    if (needsEscape(v)) break;
  }
  std::size_t run = 0;  // start of the bytes not yet copied
  for (; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    out.push_back('\\');
    switch (c) {
      case '"':
        out.push_back('"');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '\b':
        out.push_back('b');
        break;
      case '\f':
        out.push_back('f');
        break;
      case '\n':
        out.push_back('n');
        break;
      case '\r':
        out.push_back('r');
        break;
      case '\t':
        out.push_back('t');
        break;
      default:
        out.append("u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

template <typename Int>
void appendInteger(Int v, std::string& out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

struct Member {
  std::string_view key;
  simdjson::dom::element value;
  std::uint32_t position;  // in the document, so the last of equal keys sorts last
  std::uint64_t prefix;    // keyPrefix(key)
};

// The first 8 bytes of a key, zero-padded, as a big-endian number: different
// prefixes order two keys as their bytes do (a shorter key that is a prefix
// pads with zeros, which sort first), so a sort compares whole keys only when
// the prefixes are equal: memcmp on every comparison was a large share of
// the reading thread.
std::uint64_t keyPrefix(std::string_view key) {
  std::uint64_t prefix = 0;
  const std::size_t n = std::min<std::size_t>(key.size(), 8);
  for (std::size_t i = 0; i < 8; ++i) {
    prefix = (prefix << 8) | (i < n ? static_cast<unsigned char>(key[i]) : 0u);
  }
  return prefix;
}

// One stack of members shared by all levels of one write: each object sorts
// its own slice at the top, so a write allocates only while the deepest
// path grows.
void write(simdjson::dom::element e, JsonRole role, std::vector<Member>& stack, std::string& out,
           bool& negativeZero) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::OBJECT: {
      const std::size_t base = stack.size();
      std::uint32_t position = 0;
      for (auto [key, value] : simdjson::dom::object(e)) {
        if (role == JsonRole::kMetadata && key == "managedFields") continue;
        stack.push_back(Member{key, value, position++, keyPrefix(key)});
      }
      // Not std::stable_sort: it allocates a buffer on every call.
      std::sort(stack.begin() + static_cast<std::ptrdiff_t>(base), stack.end(),
                [](const Member& a, const Member& b) {
                  if (a.prefix != b.prefix) return a.prefix < b.prefix;
                  const int c = a.key.compare(b.key);
                  return c < 0 || (c == 0 && a.position < b.position);
                });
      const std::size_t end = stack.size();
      out.push_back('{');
      bool comma = false;
      for (std::size_t i = base; i < end; ++i) {
        if (i + 1 < end && stack[i + 1].prefix == stack[i].prefix &&
            stack[i + 1].key == stack[i].key)
          continue;  // a later duplicate wins
        const Member member = stack[i];
        if (comma) out.push_back(',');
        comma = true;
        appendString(member.key, out);
        out.push_back(':');
        write(member.value, memberRole(role, member.key), stack, out, negativeZero);
      }
      out.push_back('}');
      stack.resize(base);
      return;
    }
    case T::ARRAY: {
      out.push_back('[');
      bool comma = false;
      for (simdjson::dom::element item : simdjson::dom::array(e)) {
        if (comma) out.push_back(',');
        comma = true;
        write(item, elementRole(role), stack, out, negativeZero);
      }
      out.push_back(']');
      return;
    }
    case T::STRING:
      appendString(std::string_view(e), out);
      return;
    case T::INT64:
      appendInteger(std::int64_t(e), out);
      return;
    case T::UINT64:
      appendInteger(std::uint64_t(e), out);
      return;
    case T::DOUBLE: {
      const double v = double(e);
      if (v == 0 && std::signbit(v)) negativeZero = true;
      out += nlohmann::json(v).dump();
      return;
    }
    case T::BOOL:
      out += bool(e) ? "true" : "false";
      return;
    case T::NULL_VALUE:
      out += "null";
      return;
  }
}

}  // namespace

bool appendStoredJson(simdjson::dom::element element, JsonRole role, std::string& out) {
  thread_local std::vector<Member> stack;
  stack.clear();
  bool negativeZero = false;
  write(element, role, stack, out, negativeZero);
  return negativeZero;
}

bool storedWatchedObject(simdjson::dom::element root, JsonRole role, std::string& out,
                         bool* negativeZero) {
  bool sawNegativeZero = false;
  if (role == JsonRole::kObject) {
    sawNegativeZero = appendStoredJson(root, JsonRole::kObject, out);
    if (negativeZero != nullptr) *negativeZero = sawNegativeZero;
    return true;
  }
  if (role != JsonRole::kEvent) return false;
  simdjson::dom::element object;
  bool found = false;
  for (auto [key, value] : simdjson::dom::object(root)) {
    if (key == "object") {
      object = value;
      found = true;
    }
  }
  if (!found) return false;
  sawNegativeZero = appendStoredJson(object, JsonRole::kObject, out);
  if (negativeZero != nullptr) *negativeZero = sawNegativeZero;
  return true;
}

}  // namespace ledger::ingest
