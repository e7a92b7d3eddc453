#include "tools/serve/watch_stream.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "tools/serve/api_error.h"
#include "tools/serve/kube_api.h"
#include "tools/serve/selectors.h"
#include "tools/serve/table_columns.h"

namespace ledger::serve {

namespace {

std::int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr std::uint64_t kBatchRecords = 4096;

}  // namespace

WatchStream::WatchStream(WatchPlan plan, std::function<std::shared_ptr<const Ledger>()> ledger)
    : plan_(std::move(plan)),
      ledger_(std::move(ledger)),
      nextSeq_(plan_.afterSeq + 1),
      headersSent_(plan_.headersSent) {
  if (plan_.timeoutSeconds > 0) deadlineNs_ = steadyNs() + plan_.timeoutSeconds * 1'000'000'000;
}

bool WatchStream::next(const std::function<bool(std::string_view)>& write, int idleMs) {
  if (deadlineNs_ != 0 && steadyNs() >= deadlineNs_) return false;
  const auto labels = LabelSelector::parse(plan_.labelSelector);
  const auto fields = FieldSelector::parse(plan_.fieldSelector);
  ApiResource resource;
  resource.group = plan_.group;
  resource.version = plan_.version;
  resource.kind = plan_.kind;
  const auto columns = watchColumns(tableColumns(resource, plan_.version));
  auto ledger = ledger_();
  const std::uint64_t last = ledger->lastSeq();
  if (nextSeq_ > last) {
    std::this_thread::sleep_for(std::chrono::milliseconds(idleMs));
    return write({});  // an empty write: is the client still there?
  }
  const std::uint64_t to = std::min(last, nextSeq_ + kBatchRecords - 1);
  bool open = true;
  Status st = ledger->scanRecords(nextSeq_, to, [&](const Record& r, const Digest&) {
    nextSeq_ = r.seq + 1;
    const auto& id = r.identity;
    if (id.group != plan_.group || id.kind != plan_.kind) return true;
    if (!plan_.ns.empty() && id.namespace_ != plan_.ns) return true;
    if (!fields.matches(id.namespace_, id.name)) return true;
    nlohmann::json object = nlohmann::json::parse(r.objectJson, nullptr, false);
    if (!object.is_object()) return true;
    const nlohmann::json& meta = object["metadata"];
    if (!labels.matches(meta.is_object() && meta.contains("labels") ? meta["labels"]
                                                                    : nlohmann::json(nullptr))) {
      return true;
    }
    open = write(watchEventLine(eventTypeName(r.type), object, plan_.table ? &columns : nullptr,
                                !headersSent_, plan_.tableApiVersion, r.timeNs, r.timeNs));
    headersSent_ = true;
    return open;
  });
  if (!st.isOk()) {
    nlohmann::json event = {
        {"type", "ERROR"},
        {"object", nlohmann::json::parse(statusJson(ApiError::internal(st.toString())))}};
    write(event.dump() + "\n");
    return false;
  }
  if (nextSeq_ <= to) nextSeq_ = to + 1;
  return open;
}

}  // namespace ledger::serve
