// Reading Kubernetes object fields (through JsonView, json_view.h) into
// Cap'n Proto builders, tolerating absent fields and recording wrongly typed
// ones.
//
// Internal to ingest/. Not thread-safe (a FieldReader belongs to one
// projection). Never throws for bad input.
#pragma once

#include <capnp/list.h>
#include <kj/string.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/json_view.h"
#include "schema/projection.capnp.h"

namespace ledger::ingest {

using Json = JsonView;
// A field that may be absent (std::nullopt), as nlohmann's pointers were.
using JsonPtr = std::optional<JsonView>;
using JsonMembers = std::vector<std::pair<std::string_view, JsonView>>;

class FieldReader {
 public:
  // The member `key` of `obj` if it is present and not null, else nullptr.
  static JsonPtr member(const Json& obj, const char* key);
  // Follows a path of keys; nullopt when any step is absent.
  static JsonPtr path(const Json& obj, std::initializer_list<const char*> keys);

  // A string field; "" when absent. A non-string is recorded as a problem.
  std::string string(const Json& obj, const char* key, const char* where);
  // An integer field of a Kubernetes type of `bits` (32 or 64) signed bits;
  // `dflt` when absent, a problem when not an integer. A value outside that
  // range (a uint64 past int64, a count past int32, an integer beyond 64
  // bits, which json_numbers.h keeps as its digits) is a rejection: the API
  // server refuses it, and cast into the field it would be a wrapped number.
  std::int64_t integer(const Json& obj, const char* key, const char* where, std::int64_t dflt,
                       int bits = 64);
  // The same for a value already found: nullopt when it is not an integer
  // (no problem recorded) or, with *outOfRange set, is out of range
  // (rejected, named `where`).
  std::optional<std::int64_t> integerValue(const Json& value, const std::string& where, int bits,
                                           bool* outOfRange);
  bool boolean(const Json& obj, const char* key, const char* where, bool dflt);
  // A quantity written as a string or a JSON number, as its text.
  std::string quantityText(const Json& value, const std::string& where);
  // An RFC 3339 time field the projection reads; nullopt when absent or not a
  // time (as before: the projection leaves it unset). A valid time outside
  // the ledger's range (schema/k8s/rfc3339.h) is a rejection instead: the object would
  // carry a wrapped instant, so the event is not recorded.
  std::optional<std::int64_t> time(const Json& obj, const char* key, const char* where);
  // Objects/arrays: nullopt plus a problem when of the wrong type.
  JsonPtr object(const Json& obj, const char* key, const char* where);
  JsonPtr array(const Json& obj, const char* key, const char* where);

  void problem(std::string text) { problems_.push_back(std::move(text)); }
  const std::vector<std::string>& problems() const { return problems_; }
  // Why the object must not be recorded at all (the first reason), or empty.
  void reject(std::string text) {
    if (rejection_.empty()) rejection_ = std::move(text);
  }
  const std::string& rejection() const { return rejection_; }

 private:
  std::vector<std::string> problems_;
  std::string rejection_;
};

inline kj::StringPtr text(const std::string& s) { return kj::StringPtr(s.c_str(), s.size()); }
// For JsonView's keys and strings, which simdjson NUL-terminates.
inline kj::StringPtr text(std::string_view s) { return kj::StringPtr(s.data(), s.size()); }

// Fills a List(KeyValue) from a JSON map of quantities (values as text).
template <typename InitFn>
void fillQuantities(FieldReader& fr, const JsonPtr& map, const std::string& where, InitFn init) {
  if (!map) return;
  if (!map->is_object()) {
    fr.problem(where + " is not a map");
    return;
  }
  const JsonMembers members = map->items();
  auto list = init(static_cast<unsigned>(members.size()));
  unsigned i = 0;
  for (const auto& [key, value] : members) {
    list[i].setKey(text(key));
    list[i].setValue(fr.quantityText(value, where + "." + std::string(key)));
    ++i;
  }
}

// Fills a List(KeyValue) from a JSON map of strings (labels, selectors).
template <typename InitFn>
void fillStrings(FieldReader& fr, const JsonPtr& map, const std::string& where, InitFn init) {
  if (!map) return;
  if (!map->is_object()) {
    fr.problem(where + " is not a map");
    return;
  }
  const JsonMembers members = map->items();
  auto list = init(static_cast<unsigned>(members.size()));
  unsigned i = 0;
  for (const auto& member : members) {
    const JsonView& value = member.second;  // a plain name: no dependent lookup
    list[i].setKey(text(member.first));
    if (value.is_string()) {
      list[i].setValue(text(value.get<std::string_view>()));
    } else {
      list[i].setValue(value.dump());
    }
    ++i;
  }
}

// A core/v1 PodSpec (Pods and Workload pod set templates).
void projectPodSpec(FieldReader& fr, const Json& spec, schema::PodSpec::Builder out);

}  // namespace ledger::ingest
