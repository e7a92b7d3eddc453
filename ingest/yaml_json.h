// YAML -> JSON for manifests, with Kubernetes' (sigs.k8s.io/yaml) typing of
// plain scalars: null/~/empty -> null, true/false -> bool, integers -> int,
// decimals -> float, everything else (and every quoted scalar) -> string.
//
// A mapping that holds the same key twice is malformed YAML (YAML 1.2,
// 3.2.1.1: keys are unique) which yaml-cpp 0.7 accepts, keeping both pairs;
// it is rejected here, at the second occurrence's mark. It is what several
// objects printed without `---` between them look like, and accepting it
// would keep one object made of the last value of each key.
//
// Aliases: yaml-cpp shares an anchored node among its aliases, and the JSON
// conversion copies it at each use, so nine levels of ten aliases in a
// kilobyte ("billion laughs") expand to 10^9 nodes. parseYamlDocument first
// walks the document's events, which hold each alias once, and totals what
// the conversion would build; it refuses, at the alias's mark, a document
// whose expansion passes YamlLimits (or nests deeper than kMaxNestingDepth,
// input_limits.h, or uses an alias inside its own anchor, a cycle), before
// anything is built.
//
// Pure functions. Throw YAML::Exception (with its mark: line and column,
// 0-based, in the text parsed) on malformed YAML, duplicate keys included,
// and std::invalid_argument on constructs JSON cannot hold (non-scalar keys).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

namespace YAML {
class Node;
}

namespace ledger::ingest {

nlohmann::json yamlToJson(const YAML::Node& node);
// The same duplicate-key check for readers that keep the YAML nodes
// (kubeconfig files): throws as above, else does nothing.
void checkUniqueKeys(const YAML::Node& node);
struct YamlLimits {
  // The expanded document's size: every scalar's bytes plus one byte per
  // node (about its JSON text), aliases counted at each use. ValueReader
  // passes its maxValueBytes: a document may not expand past what it could
  // have held written out.
  std::uint64_t maxExpandedBytes = 64ULL << 20;
};

// Parses one YAML document; a document with no content gives a null json.
// A document over `limits` throws YAML::ParserException at the alias (or
// node) that passes them.
nlohmann::json parseYamlDocument(std::string_view text, const YamlLimits& limits = {});

}  // namespace ledger::ingest
