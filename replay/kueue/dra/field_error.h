// Errors in Kueue's words: k8s.io/apimachinery field.Error rendering, which
// is how Kueue's DRA code (pkg/dra) reports why a workload cannot be charged
// (e.g. `spec.podSets[0]...allocationMode: Invalid value: "All":
// ResourceClaimTemplate t: AllocationMode 'All' is not supported`).
//
// Value types; thread-compatible; nothing throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ledger::replay::dra {

struct FieldError {
  enum class Type { kInvalid, kNotFound, kInternal };
  Type type = Type::kInvalid;
  std::string field;
  // Invalid/NotFound carry a bad value: nullopt renders as `null`, a string
  // renders quoted as Go's %q / json.Marshal would.
  std::optional<std::string> badValue;
  std::string detail;
  // Set on the "DeviceClass X is not mapped" error: raises UnmappedDeviceClass.
  std::string unmappedDeviceClass;

  static FieldError invalid(std::string field, std::optional<std::string> value,
                            std::string detail);
  static FieldError notFound(std::string field, std::string value);
  static FieldError internal(std::string field, std::string detail);

  std::string render() const;
};

// "podsets[i]"-style path helpers matching field.Path.String().
std::string indexed(const std::string& base, std::size_t index);

// The Kubernetes client's NotFound text: `<plural>.<group> "<name>" not found`.
std::string apiNotFound(const std::string& resource, const std::string& name);

}  // namespace ledger::replay::dra
