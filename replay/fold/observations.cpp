#include "replay/fold/observations.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "ledger/format.h"
#include "ledger/object_index.h"
#include "replay/fold/replayer.h"
#include "schema/k8s/rfc3339.h"
#include "schema/observation.h"

namespace ledger::replay {

namespace {

void mustRead(const Status& st) {
  if (!st.isOk()) throw ReplayError(st);
}

std::int64_t timeField(const nlohmann::json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string()) return 0;
  return tryParseRfc3339(it->get_ref<const std::string&>()).value_or(0);
}

std::vector<std::string> strings(const nlohmann::json& j, const char* field) {
  std::vector<std::string> out;
  auto it = j.find(field);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::uint64_t countField(const nlohmann::json& j, const char* field) {
  auto it = j.find(field);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

void readClosing(const nlohmann::json& object, SnapshotBracket& b) {
  const auto status = object.find("status");
  if (status == object.end() || !status->is_object()) return;
  b.firstSeq = countField(*status, "firstSeq");
  b.lastSeq = countField(*status, "lastSeq");
  b.completedNs = timeField(*status, "completedAt");
  b.missing = strings(*status, "missing");
  if (auto gaps = status->find("gaps"); gaps != status->end() && gaps->is_array()) {
    for (const auto& g : *gaps) {
      if (!g.is_object()) continue;
      ObservationGap gap;
      gap.fromNs = timeField(g, "from");
      gap.toNs = timeField(g, "to");
      gap.resources = strings(g, "resources");
      if (auto r = g.find("reason"); r != g.end() && r->is_string()) gap.reason = *r;
      b.gaps.push_back(std::move(gap));
    }
  }
}

}  // namespace

std::vector<SnapshotBracket> readSnapshots(const Ledger& ledger, std::uint64_t lastSeq) {
  if (lastSeq == 0) lastSeq = ledger.lastSeq();
  std::vector<std::uint64_t> seqs;
  const std::string prefix = "r" + std::string(observation::kSnapshotKeyPrefix);
  mustRead(ledger.scanObjectIndex(prefix, [&](std::string_view key, std::string_view value) {
    std::string_view objectKey;
    std::uint64_t first = 0;
    if (!parseRecordEntryKey(key, &objectKey, &first)) return;
    if (!decodeRecordEntry(first, value, seqs)) {
      throw ReplayError(
          Status::corruption("object index entry for a Snapshot does not decode "
                             "(`ledger-replay verify`)"));
    }
  }));
  std::sort(seqs.begin(), seqs.end());
  std::map<std::string, SnapshotBracket> byName;
  std::vector<std::string> order;
  for (const std::uint64_t seq : seqs) {
    if (seq > lastSeq) break;
    Record rec;
    mustRead(ledger.read(seq, &rec));
    if (rec.identity.group != observation::kGroup ||
        rec.identity.kind != observation::kSnapshotKind) {
      continue;
    }
    const auto object = nlohmann::json::parse(rec.objectJson, nullptr, false);
    if (!object.is_object()) continue;
    auto [it, fresh] = byName.try_emplace(rec.identity.name);
    SnapshotBracket& b = it->second;
    if (fresh) order.push_back(rec.identity.name);
    b.name = rec.identity.name;
    if (auto spec = object.find("spec"); spec != object.end() && spec->is_object()) {
      if (auto r = spec->find("reason"); r != spec->end() && r->is_string()) b.reason = *r;
      b.startedNs = timeField(*spec, "startedAt");
    }
    if (rec.type == EventType::kAdded) {
      b.openedSeq = seq;
    } else {
      b.closedSeq = seq;
      readClosing(object, b);
    }
  }
  std::vector<SnapshotBracket> out;
  for (const auto& name : order) out.push_back(std::move(byName[name]));
  return out;
}

Coverage coverageOf(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                    std::uint64_t lastSeq) {
  Coverage c;
  if (ledger.lastSeq() == 0) return c;
  c.empty = false;
  mustRead(ledger.timeOf(1, &c.observedFromNs));
  for (auto& s : readSnapshots(ledger, lastSeq)) {
    for (auto& g : s.gaps) {
      if (g.toNs <= fromNs || g.fromNs >= toNs) continue;
      // One outage, several relists: a watch that answers 200 before its
      // 410 relists after the others have closed their snapshot. The same
      // start and reason are one gap, to the last relist.
      auto same = std::find_if(c.gaps.begin(), c.gaps.end(), [&](const ObservationGap& o) {
        return o.fromNs == g.fromNs && o.reason == g.reason;
      });
      if (same == c.gaps.end()) {
        c.gaps.push_back(std::move(g));
        continue;
      }
      same->toNs = std::max(same->toNs, g.toNs);
      for (auto& r : g.resources) {
        if (std::find(same->resources.begin(), same->resources.end(), r) == same->resources.end())
          same->resources.push_back(std::move(r));
      }
      std::sort(same->resources.begin(), same->resources.end());
    }
  }
  return c;
}

std::string describeGap(const ObservationGap& g) {
  std::string resources;
  for (const auto& r : g.resources) resources += (resources.empty() ? "" : ", ") + r;
  if (resources.empty()) resources = "every resource";
  return "the ledger did not observe " + resources + " from " + formatRfc3339(g.fromNs) + " to " +
         formatRfc3339(g.toNs) + " (" + g.reason +
         "); changes made then are recorded at the end of the gap";
}

const ObservationGap* gapAt(const Coverage& coverage, std::int64_t timeNs) {
  for (const auto& g : coverage.gaps) {
    if (g.fromNs <= timeNs && timeNs < g.toNs) return &g;
  }
  return nullptr;
}

}  // namespace ledger::replay
