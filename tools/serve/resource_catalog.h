// The resources `serve` answers for, as Kubernetes discovery names them:
// every (group, kind) the ledger stored (found in its object index, one seek
// per kind), plus the ledger's own group (kLedgerGroup), and the discovery
// documents kubectl reads (/api, /apis, /api/v1, /apis/{group}/{version}).
//
// Plural names: Kueue's and Kubernetes' for the kinds they define, else the
// API machinery's guess from the kind (meta.UnsafeGuessKindToResource:
// lower case, "y" -> "ies", "s" -> "ses", else + "s"). A kind is namespaced
// when its stored objects have a namespace.
//
// Value type; const methods are thread-safe. Errors: discover() throws
// ApiError (500) when the ledger cannot be read; lookups return null.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ledger/ledger.h"

namespace ledger::serve {

// The group of the ledger's own resources (ledger_api.h).
inline constexpr std::string_view kLedgerGroup = "quota-ledger.io";
inline constexpr std::string_view kLedgerVersion = "v1alpha1";

struct ApiResource {
  std::string group, version, kind;
  std::string plural, singular;
  std::vector<std::string> shortNames;
  bool namespaced = false;
  bool ledgerOwn = false;  // one of the ledger's answers, not a stored kind

  std::string groupVersion() const { return group.empty() ? version : group + "/" + version; }
};

class ResourceCatalog {
 public:
  static ResourceCatalog discover(const Ledger& ledger);

  const std::vector<ApiResource>& resources() const { return resources_; }
  // By the path's group, version and plural (or, as kubectl never sends, kind).
  const ApiResource* find(std::string_view group, std::string_view version,
                          std::string_view plural) const;
  bool hasGroupVersion(std::string_view group, std::string_view version) const;

  std::string apiVersionsJson() const;   // GET /api
  std::string apiGroupListJson() const;  // GET /apis
  // GET /api/v1 or /apis/{group}/{version}; empty when none is served.
  std::string resourceListJson(std::string_view group, std::string_view version) const;

 private:
  std::vector<ApiResource> resources_;
};

}  // namespace ledger::serve
