#include "replay/admission/kueue_units.h"

#include <algorithm>

#include "replay/kueue/resources.h"

namespace ledger::replay::admission {

namespace {

bool binaryByName(const std::string& resource, const std::set<std::string>& binary) {
  return resource == "memory" || resource == "ephemeral-storage" ||
         resource.rfind("hugepages-", 0) == 0 || binary.count(resource) != 0;
}

}  // namespace

Int128 kueueUnits(const std::string& resource, const Quantity& q) {
  const Int128 v = kueueValue(resource, q);
  return v > kUnlimited ? kUnlimited : v;
}

Quantity fromKueueUnits(const std::string& resource, Int128 value) {
  const Int128 unit = resource == "cpu" ? 1'000'000 : 1'000'000'000;
  return Quantity::fromNanos(value * unit);
}

std::string formatKueue(const std::string& resource, Int128 value,
                        const std::set<std::string>& binary) {
  if (value >= kUnlimited) return "<unlimited>";
  if (resource == "cpu") return Quantity::fromNanos(value * 1'000'000).toString();
  const Int128 magnitude = value < 0 ? -value : value;
  // newCanonicalQuantity: BinarySI text re-parsed, so only values that are
  // >= 1024 and a whole number of Ki keep a binary suffix.
  const bool binarySuffix =
      binaryByName(resource, binary) && magnitude >= 1024 && magnitude % 1024 == 0;
  return Quantity::fromNanos(value * 1'000'000'000, binarySuffix ? Quantity::Format::kBinarySI
                                                                 : Quantity::Format::kDecimalSI)
      .toString();
}

std::uint64_t fnv1a64(std::string_view name) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::vector<std::string> kueueResourceOrder(std::vector<std::string> names) {
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    const auto ha = fnv1a64(a);
    const auto hb = fnv1a64(b);
    return ha != hb ? ha < hb : a < b;
  });
  return names;
}

std::set<std::string> binaryFormattedResources(const ClusterState& state) {
  std::set<std::string> out;
  const StoredObject* config = state.draConfig();
  if (config == nullptr) return out;
  for (auto mapping : config->projection().getBody().getDraConfig().getMappings()) {
    if (mapping.getSources().size() > 0) out.insert(mapping.getName().cStr());
  }
  return out;
}

}  // namespace ledger::replay::admission
