// YAML -> JSON for manifests, with Kubernetes' (sigs.k8s.io/yaml) typing of
// plain scalars: null/~/empty -> null, true/false -> bool, integers -> int,
// decimals -> float, everything else (and every quoted scalar) -> string.
//
// Pure function. Throws YAML::Exception (with its mark) on malformed YAML and
// std::invalid_argument on constructs JSON cannot hold (non-scalar keys).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace YAML {
class Node;
}

namespace ledger::ingest {

nlohmann::json yamlToJson(const YAML::Node& node);
// Parses one YAML document; a document with no content gives a null json.
nlohmann::json parseYamlDocument(std::string_view text);

}  // namespace ledger::ingest
