// How a report over a period groups its rows (ledger-query report --by):
// by one dimension of the usage levels or several, "cluster-queue,flavor".
// A row's group is one value per dimension, in the order given.
//
// The dimensions are those of the reserved levels' key (usage_levels.h
// ReservedKey): ClusterQueue, namespace, workload (NAMESPACE/NAME) and
// flavor. A workload names its namespace, so the two are not taken together.
// Nominal quota exists per (ClusterQueue, flavor, resource): only a grouping
// by ClusterQueue, with or without flavor, carries it (carriesQuota).
//
// Value types; parseGrouping throws std::invalid_argument with the reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "replay/kueue/usage_levels.h"

namespace ledger::replay {

// One dimension a report's rows are keyed by.
enum class GroupBy : std::uint8_t { kClusterQueue, kNamespace, kWorkload, kFlavor };

// The --by word ("cluster-queue"), the JSON field ("clusterQueue"), the CSV
// column ("cluster_queue") and the table header ("CLUSTERQUEUE") of each.
std::string_view dimensionWord(GroupBy dimension);
std::string_view dimensionField(GroupBy dimension);
std::string_view dimensionColumn(GroupBy dimension);
std::string_view dimensionHeader(GroupBy dimension);

struct Grouping {
  std::vector<GroupBy> dimensions;  // at least one, each once

  Grouping() : dimensions{GroupBy::kClusterQueue} {}
  // One dimension: what --by took before keys could be joined.
  Grouping(GroupBy one) : dimensions{one} {}  // NOLINT(google-explicit-constructor)
  explicit Grouping(std::vector<GroupBy> several) : dimensions(std::move(several)) {}

  bool has(GroupBy dimension) const;
  // Rows per workload: the log must be read (rollups keep namespaces).
  bool byWorkload() const { return has(GroupBy::kWorkload); }
  // Grouped by ClusterQueue and nothing but flavor besides.
  bool carriesQuota() const;
  // The --by text: the words joined by commas.
  std::string text() const;
  // A reserved level's group; `owner` is the namespace, or NAMESPACE/NAME
  // when the levels were followed per workload.
  std::vector<std::string> groupOf(const ReservedKey& key) const;
  // A nominal quota's group (only when carriesQuota()).
  std::vector<std::string> groupOf(const QuotaKey& key) const;
};

// "cluster-queue", "flavor", "cluster-queue,flavor", ...; throws
// std::invalid_argument naming the word that is not a dimension, one given
// twice, or namespace with workload.
Grouping parseGrouping(std::string_view text);

// The words --by takes, for messages: "cluster-queue, namespace, workload
// or flavor".
std::string groupingWords();

}  // namespace ledger::replay
