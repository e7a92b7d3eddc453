#include "replay/kueue/usage_grouping.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace ledger::replay {

namespace {

struct DimensionNames {
  GroupBy dimension;
  std::string_view word, field, column, header;
};

constexpr std::array<DimensionNames, 4> kDimensions = {{
    {GroupBy::kClusterQueue, "cluster-queue", "clusterQueue", "cluster_queue", "CLUSTERQUEUE"},
    {GroupBy::kNamespace, "namespace", "namespace", "namespace", "NAMESPACE"},
    {GroupBy::kWorkload, "workload", "workload", "workload", "WORKLOAD"},
    {GroupBy::kFlavor, "flavor", "flavor", "flavor", "FLAVOR"},
}};

const DimensionNames& namesOf(GroupBy dimension) {
  return kDimensions[static_cast<std::size_t>(dimension)];
}

}  // namespace

std::string_view dimensionWord(GroupBy d) { return namesOf(d).word; }
std::string_view dimensionField(GroupBy d) { return namesOf(d).field; }
std::string_view dimensionColumn(GroupBy d) { return namesOf(d).column; }
std::string_view dimensionHeader(GroupBy d) { return namesOf(d).header; }

bool Grouping::has(GroupBy dimension) const {
  return std::find(dimensions.begin(), dimensions.end(), dimension) != dimensions.end();
}

bool Grouping::carriesQuota() const {
  return has(GroupBy::kClusterQueue) && !has(GroupBy::kNamespace) && !has(GroupBy::kWorkload);
}

std::string Grouping::text() const {
  std::string out;
  for (GroupBy d : dimensions) {
    if (!out.empty()) out += ",";
    out += dimensionWord(d);
  }
  return out;
}

std::vector<std::string> Grouping::groupOf(const ReservedKey& key) const {
  std::vector<std::string> group;
  group.reserve(dimensions.size());
  for (GroupBy d : dimensions) {
    switch (d) {
      case GroupBy::kClusterQueue:
        group.push_back(key.clusterQueue);
        break;
      case GroupBy::kNamespace:
      case GroupBy::kWorkload:
        group.push_back(key.owner);  // followed per namespace or per workload
        break;
      case GroupBy::kFlavor:
        group.push_back(key.flavor);
        break;
    }
  }
  return group;
}

std::vector<std::string> Grouping::groupOf(const QuotaKey& key) const {
  std::vector<std::string> group;
  group.reserve(dimensions.size());
  for (GroupBy d : dimensions) {
    group.push_back(d == GroupBy::kFlavor ? key.flavor : key.clusterQueue);
  }
  return group;
}

std::string groupingWords() { return "cluster-queue, namespace, workload or flavor"; }

Grouping parseGrouping(std::string_view text) {
  Grouping out{std::vector<GroupBy>{}};
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view word = text.substr(start, comma - start);
    const auto it = std::find_if(kDimensions.begin(), kDimensions.end(),
                                 [&](const DimensionNames& n) { return n.word == word; });
    if (it == kDimensions.end()) {
      throw std::invalid_argument("'" + std::string(word) + "' is not one of " + groupingWords() +
                                  " (several joined by commas: cluster-queue,flavor)");
    }
    if (out.has(it->dimension)) {
      throw std::invalid_argument("'" + std::string(word) + "' is given twice");
    }
    out.dimensions.push_back(it->dimension);
    if (comma == text.size()) break;
    start = comma + 1;
  }
  if (out.has(GroupBy::kNamespace) && out.has(GroupBy::kWorkload)) {
    throw std::invalid_argument(
        "namespace and workload do not go together: a workload's group names its namespace "
        "(NAMESPACE/NAME)");
  }
  return out;
}

}  // namespace ledger::replay
