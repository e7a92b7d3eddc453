#include "regex.h"

#include <algorithm>
#include <charconv>
#include <vector>

// GCC 12 reports a false -Wmaybe-uninitialized inside <regex>'s NFA
// construction when optimizing with sanitizers; it is not in our code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "cel_limits.h"

namespace ledger::cel {

struct Regex::Impl {
  std::regex re;
};

Regex::Regex(std::unique_ptr<const Impl> impl, std::size_t programSize)
    : impl_(std::move(impl)), programSize_(programSize) {}
Regex::~Regex() = default;

namespace {

// Rewrites the RE2 spellings we accept into ECMAScript; false for the ones
// ECMAScript would misread rather than reject.
bool translate(std::string_view in, std::string& out, bool& icase, std::string& error) {
  if (in.substr(0, 4) == "(?i)") {
    icase = true;
    in.remove_prefix(4);
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '\\' && i + 1 < in.size()) {
      const char e = in[i + 1];
      if (e == 'A') {
        out += '^';
      } else if (e == 'z') {
        out += '$';
      } else if (e == 'p' || e == 'P' || e == 'C' || e == 'Q' || e == 'E') {
        error = std::string("unsupported escape \\") + e;
        return false;
      } else {
        out += c;
        out += e;
      }
      ++i;
    } else if (in.substr(i, 4) == "(?P<" ||
               (in.substr(i, 3) == "(?<" && in.substr(i, 4) != "(?<=" &&
                in.substr(i, 4) != "(?<!")) {
      const std::size_t close = in.find('>', i);
      if (close == std::string_view::npos) {
        error = "missing closing > in group name";
        return false;
      }
      out += '(';
      i = close;
    } else if (in.substr(i, 2) == "(?" && in.substr(i, 3) != "(?:") {
      error = "unsupported group flag (RE2 flags other than a leading (?i))";
      return false;
    } else {
      out += c;
    }
  }
  return true;
}

// Upper bound of the NFA size after expanding counted repetitions: each
// {n,m} multiplies the size of the atom before it by m (or n+1 when open).
// Also enforces the nesting limit. RE2 itself caps counts at 1000.
bool estimate(std::string_view p, std::size_t& size, std::string& error) {
  std::vector<std::size_t> groups{0};  // running size per open group
  std::size_t lastAtom = 0;            // size of the most recent atom
  bool inClass = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
      lastAtom = 1;
      groups.back() += 1;
    } else if (inClass) {
      if (c == ']') inClass = false;
    } else if (c == '[') {
      inClass = true;
      lastAtom = 1;
      groups.back() += 1;
    } else if (c == '(') {
      groups.push_back(0);
      if (static_cast<int>(groups.size()) > kMaxRegexNesting) {
        error = "pattern nests groups too deeply";
        return false;
      }
    } else if (c == ')') {
      if (groups.size() < 2) break;  // unbalanced: std::regex reports it
      lastAtom = groups.back() + 1;
      groups.pop_back();
      groups.back() += lastAtom;
    } else if (c == '{') {
      const std::size_t close = p.find('}', i);
      if (close == std::string_view::npos) {
        groups.back() += 1;
        continue;
      }
      std::string_view body = p.substr(i + 1, close - i - 1);
      const std::size_t comma = body.find(',');
      std::string_view hiText = comma == std::string_view::npos ? body : body.substr(comma + 1);
      std::string_view loText = body.substr(0, comma);
      std::size_t lo = 0;
      std::size_t hi = 0;
      std::from_chars(loText.data(), loText.data() + loText.size(), lo);
      if (hiText.empty()) {
        hi = lo + 1;
      } else {
        std::from_chars(hiText.data(), hiText.data() + hiText.size(), hi);
      }
      if (lo > 1000 || hi > 1000) {
        error = "bad repetition operator: counts above 1000";
        return false;
      }
      const std::size_t extra = lastAtom * std::max<std::size_t>(hi, 1);
      groups.back() += extra;
      if (groups.back() > kMaxRegexProgram) break;
      i = close;
    } else {
      lastAtom = 1;
      groups.back() += 1;
    }
    if (groups.back() > kMaxRegexProgram) break;
  }
  size = 0;
  for (std::size_t g : groups) size += g;
  if (size > kMaxRegexProgram) {
    error = "pattern too large";
    return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const Regex> Regex::compile(std::string_view pattern, std::string& error) {
  if (pattern.size() > kMaxRegexBytes) {
    error = "pattern longer than " + std::to_string(kMaxRegexBytes) + " bytes";
    return nullptr;
  }
  std::string translated;
  bool icase = false;
  std::size_t size = 0;
  if (!translate(pattern, translated, icase, error) || !estimate(translated, size, error)) {
    return nullptr;
  }
  auto flags = std::regex::ECMAScript | std::regex_constants::__polynomial;
  if (icase) flags |= std::regex::icase;
  try {
    auto impl = std::make_unique<const Impl>(Impl{std::regex(translated, flags)});
    return std::make_shared<const Regex>(std::move(impl), size + 1);
  } catch (const std::regex_error& e) {
    error = e.what();
    return nullptr;
  }
}

std::optional<bool> Regex::search(std::string_view text) const {
  try {
    return std::regex_search(text.begin(), text.end(), impl_->re);
  } catch (const std::regex_error&) {
    return std::nullopt;
  }
}

}  // namespace ledger::cel
