#include "ingest/watch_event.h"

#include "ingest/input_limits.h"
#include "schema/k8s/rfc3339.h"

namespace ledger::ingest {

namespace {

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const std::string* stringField(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

// The identity fields the ledger keys records by (identityOf, ingester.h):
// a control character or invalid UTF-8 in one is rejected here, where the
// value's position is still known, rather than recorded (input_limits.h).
std::string identityProblem(const nlohmann::json& object) {
  static constexpr const char* kTop[] = {"apiVersion", "kind"};
  static constexpr const char* kMeta[] = {"name", "namespace", "uid", "resourceVersion"};
  for (const char* key : kTop) {
    if (const std::string* v = stringField(object, key)) {
      if (std::string problem = identityValueProblem(*v); !problem.empty())
        return std::string(key) + " " + problem;
    }
  }
  auto meta = object.find("metadata");
  if (meta == object.end()) return {};
  for (const char* key : kMeta) {
    if (const std::string* v = stringField(*meta, key)) {
      if (std::string problem = identityValueProblem(*v); !problem.empty())
        return "metadata." + std::string(key) + " " + problem;
    }
  }
  return {};
}

}  // namespace

bool isKueueConfiguration(std::string_view apiVersion, std::string_view kind) {
  return kind == "Configuration" && (apiVersion == "config.kueue.x-k8s.io/v1beta1" ||
                                     apiVersion == "config.kueue.x-k8s.io/v1beta2");
}

std::string objectProblem(const nlohmann::json& object) {
  if (!object.is_object()) return "object is not a JSON object";
  const std::string* kind = stringField(object, "kind");
  if (kind == nullptr || kind->empty()) return "object has no kind";
  const std::string* apiVersion = stringField(object, "apiVersion");
  if (apiVersion == nullptr || apiVersion->empty()) return "object has no apiVersion";
  if (std::string problem = identityProblem(object); !problem.empty()) return "object's " + problem;
  auto meta = object.find("metadata");
  // Kueue's Configuration is a file, never an API object: Kueue's own
  // config/components/manager/controller_manager_config.yaml has no metadata,
  // and the contract names such a document as a source of the DRA mapping.
  if (isKueueConfiguration(*apiVersion, *kind) && (meta == object.end() || meta->is_null()))
    return {};
  if (meta == object.end() || !meta->is_object()) return "object has no metadata";
  const std::string* name = stringField(*meta, "name");
  if (isKueueConfiguration(*apiVersion, *kind) && name == nullptr) return {};
  if (name == nullptr || name->empty()) return "object has no metadata.name";
  return {};
}

NormalizeResult normalizeValue(nlohmann::json value) {
  NormalizeResult result;
  if (!value.is_object()) {
    result.errors.push_back("value is not a JSON object");
    return result;
  }
  auto typeIt = value.find("type");
  auto objectIt = value.find("object");
  if (typeIt != value.end() && objectIt != value.end() && typeIt->is_string()) {
    WatchEvent ev;
    const std::string& type = typeIt->get_ref<const std::string&>();
    if (type == "ADDED") {
      ev.type = WatchEventType::kAdded;
    } else if (type == "MODIFIED") {
      ev.type = WatchEventType::kModified;
    } else if (type == "DELETED") {
      ev.type = WatchEventType::kDeleted;
    } else if (type == "BOOKMARK") {
      ev.type = WatchEventType::kBookmark;
    } else if (type == "ERROR") {
      ev.type = WatchEventType::kError;
    } else {
      result.errors.push_back("unknown watch event type '" + type + "'");
      return result;
    }
    if (auto timeIt = value.find("time"); timeIt != value.end() && !timeIt->is_null()) {
      if (!timeIt->is_string()) {
        result.errors.push_back("event time is not a string");
        return result;
      }
      bool outOfRange = false;
      ev.timeNs = tryParseRfc3339(timeIt->get_ref<const std::string&>(), &outOfRange);
      if (outOfRange) {
        result.errors.push_back("event time '" + timeIt->get<std::string>() +
                                "' is outside the ledger's time range " + timeRangeText());
        return result;
      }
      if (!ev.timeNs) {
        result.errors.push_back("event time '" + timeIt->get<std::string>() + "' is not RFC 3339");
        return result;
      }
    }
    ev.object = std::move(*objectIt);
    if (ev.type == WatchEventType::kAdded || ev.type == WatchEventType::kModified ||
        ev.type == WatchEventType::kDeleted) {
      if (std::string problem = objectProblem(ev.object); !problem.empty()) {
        result.errors.push_back(problem);
        return result;
      }
    } else if (!ev.object.is_object()) {
      result.errors.push_back(type + " event has no object");
      return result;
    }
    result.events.push_back(std::move(ev));
    return result;
  }
  const std::string* kind = stringField(value, "kind");
  auto itemsIt = value.find("items");
  if (kind != nullptr && endsWith(*kind, "List") && itemsIt != value.end() && itemsIt->is_array()) {
    const std::string itemKind = kind->substr(0, kind->size() - 4);
    const std::string* listApiVersion = stringField(value, "apiVersion");
    std::size_t index = 0;
    for (auto& item : *itemsIt) {
      if (item.is_object()) {
        if (!item.contains("kind") && !itemKind.empty()) item["kind"] = itemKind;
        if (!item.contains("apiVersion") && listApiVersion != nullptr) {
          item["apiVersion"] = *listApiVersion;
        }
      }
      if (std::string problem = objectProblem(item); !problem.empty()) {
        result.errors.push_back("items[" + std::to_string(index) + "]: " + problem);
      } else {
        result.events.push_back(
            WatchEvent{WatchEventType::kUpsert, std::move(item), std::nullopt, {}, {}});
      }
      ++index;
    }
    return result;
  }
  if (std::string problem = objectProblem(value); !problem.empty()) {
    result.errors.push_back(problem);
    return result;
  }
  result.events.push_back(
      WatchEvent{WatchEventType::kUpsert, std::move(value), std::nullopt, {}, {}});
  return result;
}

std::string stringMember(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace ledger::ingest
