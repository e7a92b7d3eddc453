// Semantic versions as k8s' CEL semver library parses them: strictly per
// github.com/blang/semver/v4 Parse, or after the library's normalization
// (normalizeAndParse in k8s.io/apiserver/pkg/cel/library/semverlib.go).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "replay/cel/device_selector.h"

namespace ledger::cel {

// Like parseSemver, but says why a text is rejected (blang/semver's wording).
std::optional<Semver> parseSemver(std::string_view text, std::string& error);

// semver(text, true): drops a leading "v", fills in missing minor/patch and
// strips leading zeros before parsing.
std::optional<Semver> parseSemverNormalized(std::string_view text, std::string& error);

}  // namespace ledger::cel
