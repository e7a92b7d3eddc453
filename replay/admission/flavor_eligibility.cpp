#include "replay/admission/flavor_eligibility.h"

#include <charconv>
#include <map>
#include <optional>
#include <vector>

namespace ledger::replay::admission {

namespace {

std::optional<std::int64_t> parseInt(std::string_view s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || ptr != end || s.empty()) return std::nullopt;
  return v;
}

using Labels = std::map<std::string, std::string, std::less<>>;

// labels.Requirement.Matches for the node selector operators.
bool requirementMatches(schema::NodeSelectorRequirement::Reader req, const Labels& labels) {
  const std::string op = req.getOperator().cStr();
  auto it = labels.find(std::string_view(req.getKey().cStr()));
  const bool has = it != labels.end();
  auto inValues = [&] {
    for (auto v : req.getValues()) {
      if (has && it->second == v.cStr()) return true;
    }
    return false;
  };
  if (op == "In") return has && inValues();
  if (op == "NotIn") return !has || !inValues();
  if (op == "Exists") return has;
  if (op == "DoesNotExist") return !has;
  if (op == "Gt" || op == "Lt") {
    if (!has || req.getValues().size() != 1) return false;
    auto want = parseInt(req.getValues()[0].cStr());
    auto got = parseInt(it->second);
    if (!want || !got) return false;
    return op == "Gt" ? *got > *want : *got < *want;
  }
  return false;
}

// Go's %s of a corev1.Taint value: the struct's fields, TimeAdded nil.
std::string goTaint(schema::Taint::Reader t) {
  return std::string("{") + t.getKey().cStr() + " " + t.getValue().cStr() + " " +
         t.getEffect().cStr() + " <nil>}";
}

}  // namespace

bool toleratesTaint(schema::Toleration::Reader t, schema::Taint::Reader taint) {
  if (t.getEffect().size() > 0 && t.getEffect() != taint.getEffect()) return false;
  if (t.getKey().size() > 0 && t.getKey() != taint.getKey()) return false;
  const std::string op = t.getOperator().cStr();
  if (op.empty() || op == "Equal") return t.getValue() == taint.getValue();
  if (op == "Exists") return true;
  if (op == "Gt" || op == "Lt") {  // comparison operators (enabled by Kueue's call)
    auto tol = parseInt(t.getValue().cStr());
    auto val = parseInt(taint.getValue().cStr());
    if (!tol || !val) return false;
    return op == "Gt" ? *val > *tol : *val < *tol;
  }
  return false;
}

bool matchesNodeAffinity(schema::ResourceFlavor::Reader flavor, schema::PodSpec::Reader podSpec) {
  Labels labels;
  for (auto kv : flavor.getNodeLabels()) labels[kv.getKey().cStr()] = kv.getValue().cStr();
  // nodeSelector, keeping only the flavor's keys: every pair must match.
  for (auto kv : podSpec.getNodeSelector()) {
    auto it = labels.find(std::string_view(kv.getKey().cStr()));
    if (it == labels.end()) continue;
    if (it->second != kv.getValue().cStr()) return false;
  }
  // Required affinity terms (ORed), each filtered to the flavor's keys; a
  // term left empty drops the whole affinity (it would match any flavor).
  std::vector<std::vector<schema::NodeSelectorRequirement::Reader>> terms;
  for (auto term : podSpec.getRequiredNodeAffinity()) {
    std::vector<schema::NodeSelectorRequirement::Reader> kept;
    for (auto e : term.getMatchExpressions()) {
      if (labels.count(std::string_view(e.getKey().cStr())) != 0) kept.push_back(e);
    }
    if (kept.empty()) {
      terms.clear();
      break;
    }
    terms.push_back(std::move(kept));
  }
  if (terms.empty()) return true;
  for (const auto& term : terms) {
    bool all = true;
    for (auto e : term) all = all && requirementMatches(e, labels);
    if (all) return true;
  }
  return false;
}

std::string flavorIneligibility(const std::string& flavorName,
                                schema::ResourceFlavor::Reader flavor,
                                schema::PodSpec::Reader podSpec) {
  for (auto taint : flavor.getNodeTaints()) {
    if (taint.getEffect() != "NoSchedule" && taint.getEffect() != "NoExecute") continue;
    bool tolerated = false;
    for (auto t : podSpec.getTolerations()) tolerated = tolerated || toleratesTaint(t, taint);
    for (auto t : flavor.getTolerations()) tolerated = tolerated || toleratesTaint(t, taint);
    if (!tolerated) return "untolerated taint " + goTaint(taint) + " in flavor " + flavorName;
  }
  if (!matchesNodeAffinity(flavor, podSpec)) {
    return "flavor " + flavorName + " doesn't match node affinity";
  }
  return "";
}

}  // namespace ledger::replay::admission
