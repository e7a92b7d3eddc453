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
// Pure functions. Throw YAML::Exception (with its mark: line and column,
// 0-based, in the text parsed) on malformed YAML, duplicate keys included,
// and std::invalid_argument on constructs JSON cannot hold (non-scalar keys).
#pragma once

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
// Parses one YAML document; a document with no content gives a null json.
nlohmann::json parseYamlDocument(std::string_view text);

}  // namespace ledger::ingest
