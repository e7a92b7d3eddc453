// blang/semver/v4 Parse and Compare, which is what Kubernetes uses both for
// version attributes and for CEL's semver() (semverlib.go).
#include "replay/cel/semver.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <vector>

namespace ledger::cel {
namespace {

bool allDigits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool alphanumeric(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
  });
}

bool hasLeadingZero(std::string_view s) { return s.size() > 1 && s[0] == '0'; }

std::vector<std::string_view> split(std::string_view s, char sep, std::size_t maxParts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < maxParts) {
    const std::size_t at = s.find(sep);
    if (at == std::string_view::npos) break;
    parts.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  parts.push_back(s);
  return parts;
}

// One numeric version component; our Semver keeps them as int64.
bool number(std::string_view s, const char* what, std::int64_t& out, std::string& error) {
  if (!allDigits(s)) {
    error =
        std::string("Invalid character(s) found in ") + what + " number \"" + std::string(s) + "\"";
    return false;
  }
  if (hasLeadingZero(s)) {
    error =
        std::string(what) + " number must not contain leading zeroes \"" + std::string(s) + "\"";
    return false;
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    error = std::string("invalid ") + what + " number \"" + std::string(s) + "\"";
    return false;
  }
  return true;
}

// Prerelease identifiers: numeric (no leading zeros) or [0-9A-Za-z-]+.
bool validPrerelease(std::string_view pre, std::string& error) {
  for (std::string_view part : split(pre, '.', std::numeric_limits<std::size_t>::max())) {
    if (part.empty()) {
      error = "Prerelease is empty";
      return false;
    }
    if (allDigits(part) ? hasLeadingZero(part) : !alphanumeric(part)) {
      error = "Invalid character(s) found in prerelease \"" + std::string(part) + "\"";
      return false;
    }
  }
  return true;
}

int comparePrereleasePart(std::string_view a, std::string_view b) {
  const bool na = allDigits(a);
  const bool nb = allDigits(b);
  if (na && nb) {
    // Numeric identifiers without leading zeros: longer is larger.
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  } else if (na != nb) {
    return na ? -1 : 1;  // numeric identifiers sort before alphanumeric ones
  }
  return a == b ? 0 : (a < b ? -1 : 1);
}

}  // namespace

std::optional<Semver> parseSemver(std::string_view text, std::string& error) {
  if (text.empty()) {
    error = "Version string empty";
    return std::nullopt;
  }
  const std::vector<std::string_view> parts = split(text, '.', 3);
  if (parts.size() != 3) {
    error = "No Major.Minor.Patch elements found";
    return std::nullopt;
  }
  Semver v;
  if (!number(parts[0], "Major", v.major, error) || !number(parts[1], "Minor", v.minor, error)) {
    return std::nullopt;
  }
  std::string_view patch = parts[2];
  if (const std::size_t plus = patch.find('+'); plus != std::string_view::npos) {
    v.build = std::string(patch.substr(plus + 1));
    patch = patch.substr(0, plus);
    for (std::string_view b : split(v.build, '.', std::numeric_limits<std::size_t>::max())) {
      if (b.empty() || !alphanumeric(b)) {
        error = b.empty()
                    ? "Build meta data is empty"
                    : "Invalid character(s) found in build meta data \"" + std::string(b) + "\"";
        return std::nullopt;
      }
    }
  }
  if (const std::size_t dash = patch.find('-'); dash != std::string_view::npos) {
    v.prerelease = std::string(patch.substr(dash + 1));
    patch = patch.substr(0, dash);
    if (!validPrerelease(v.prerelease, error)) return std::nullopt;
  }
  if (!number(patch, "Patch", v.patch, error)) return std::nullopt;
  return v;
}

std::optional<Semver> parseSemverNormalized(std::string_view text, std::string& error) {
  if (!text.empty() && text[0] == 'v') text.remove_prefix(1);
  std::vector<std::string> parts;
  for (std::string_view p : split(text, '.', 3)) parts.emplace_back(p);
  for (std::string& p : parts) {
    if (p.size() > 1) {
      p.erase(0, std::min(p.find_first_not_of('0'), p.size()));
      if (p.empty() || !(p[0] >= '0' && p[0] <= '9')) p.insert(p.begin(), '0');
    }
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      error = "short version cannot contain PreRelease/Build meta data";
      return std::nullopt;
    }
    while (parts.size() < 3) parts.emplace_back("0");
  }
  return parseSemver(parts[0] + "." + parts[1] + "." + parts[2], error);
}

std::optional<Semver> parseSemver(std::string_view text) {
  std::string ignored;
  return parseSemver(text, ignored);
}

int compareSemver(const Semver& a, const Semver& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  // A version without prerelease has the higher precedence.
  if (a.prerelease.empty() || b.prerelease.empty()) {
    if (a.prerelease.empty() && b.prerelease.empty()) return 0;
    return a.prerelease.empty() ? 1 : -1;
  }
  const auto pa = split(a.prerelease, '.', std::numeric_limits<std::size_t>::max());
  const auto pb = split(b.prerelease, '.', std::numeric_limits<std::size_t>::max());
  for (std::size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    if (const int c = comparePrereleasePart(pa[i], pb[i]); c != 0) return c;
  }
  if (pa.size() == pb.size()) return 0;
  return pa.size() < pb.size() ? -1 : 1;
}

}  // namespace ledger::cel
