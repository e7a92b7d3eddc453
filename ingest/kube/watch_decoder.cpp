#include "ingest/kube/watch_decoder.h"

#include <nlohmann/json.hpp>

#include "ingest/input_limits.h"
#include "ingest/json_numbers.h"
#include "ingest/watch_event.h"

namespace ledger::kube {

namespace {

using Json = nlohmann::json;

}  // namespace

WatchLine decodeWatchLine(std::string_view line, const std::string& apiVersion,
                          const std::string& kind) {
  WatchLine out;
  if (line.empty()) return out;
  if (const auto at = ingest::nestingTooDeepAt(line)) {
    out.rejected.push_back("JSON nested deeper than " + std::to_string(ingest::kMaxNestingDepth) +
                           " levels at byte " + std::to_string(*at) + " of the line");
    return out;
  }
  Json ev = ingest::parseJsonKeepingIntegers(line, false);
  if (!ev.is_object()) {
    out.rejected.push_back("a line that is not a JSON object");
    return out;
  }
  out.type = ingest::stringMember(ev, "type");
  if (out.type == "ERROR") {
    const Json st = ev.value("object", Json::object());
    long code = 0;
    if (st.is_object() && st.contains("code") && st["code"].is_number_integer()) {
      code = st["code"].get<long>();
    }
    out.error = true;
    out.expired = code == 410 || ingest::stringMember(st, "reason") == "Expired" ||
                  ingest::stringMember(st, "reason") == "Gone";
    out.errorText = "ERROR event: " + (ingest::stringMember(st, "message").empty()
                                           ? ev.dump()
                                           : ingest::stringMember(st, "message"));
    return out;
  }
  if (auto obj = ev.find("object"); obj != ev.end() && obj->is_object() && out.type != "BOOKMARK") {
    if (!obj->contains("apiVersion")) (*obj)["apiVersion"] = apiVersion;
    if (!obj->contains("kind")) (*obj)["kind"] = kind;
  }
  ingest::NormalizeResult normalized = ingest::normalizeValue(std::move(ev));
  out.events = std::move(normalized.events);
  out.rejected = std::move(normalized.errors);
  return out;
}

}  // namespace ledger::kube
