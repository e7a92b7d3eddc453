// Reading Kubernetes object fields from nlohmann::json into Cap'n Proto
// builders, tolerating absent fields and recording wrongly typed ones.
//
// Internal to ingest/. Not thread-safe (a FieldReader belongs to one
// projection). Never throws for bad input.
#pragma once

#include <capnp/list.h>
#include <kj/string.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "projection.capnp.h"

namespace ledger::ingest {

using Json = nlohmann::json;

class FieldReader {
 public:
  // The member `key` of `obj` if it is present and not null, else nullptr.
  static const Json* member(const Json& obj, const char* key);
  // Follows a path of keys; nullptr when any step is absent.
  static const Json* path(const Json& obj, std::initializer_list<const char*> keys);

  // A string field; "" when absent. A non-string is recorded as a problem.
  std::string string(const Json& obj, const char* key, const char* where);
  std::int64_t integer(const Json& obj, const char* key, const char* where, std::int64_t dflt);
  bool boolean(const Json& obj, const char* key, const char* where, bool dflt);
  // A quantity written as a string or a JSON number, as its text.
  std::string quantityText(const Json& value, const std::string& where);
  // Objects/arrays: nullptr plus a problem when of the wrong type.
  const Json* object(const Json& obj, const char* key, const char* where);
  const Json* array(const Json& obj, const char* key, const char* where);

  void problem(std::string text) { problems_.push_back(std::move(text)); }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

inline kj::StringPtr text(const std::string& s) { return kj::StringPtr(s.c_str(), s.size()); }

// Fills a List(KeyValue) from a JSON map of quantities (values as text).
template <typename InitFn>
void fillQuantities(FieldReader& fr, const Json* map, const std::string& where, InitFn init) {
  if (map == nullptr) return;
  if (!map->is_object()) {
    fr.problem(where + " is not a map");
    return;
  }
  auto list = init(static_cast<unsigned>(map->size()));
  unsigned i = 0;
  for (auto it = map->begin(); it != map->end(); ++it, ++i) {
    list[i].setKey(it.key());
    list[i].setValue(fr.quantityText(it.value(), where + "." + it.key()));
  }
}

// Fills a List(KeyValue) from a JSON map of strings (labels, selectors).
template <typename InitFn>
void fillStrings(FieldReader& fr, const Json* map, const std::string& where, InitFn init) {
  if (map == nullptr) return;
  if (!map->is_object()) {
    fr.problem(where + " is not a map");
    return;
  }
  auto list = init(static_cast<unsigned>(map->size()));
  unsigned i = 0;
  for (auto it = map->begin(); it != map->end(); ++it, ++i) {
    list[i].setKey(it.key());
    list[i].setValue(it->is_string() ? it->get<std::string>() : it->dump());
  }
}

// A core/v1 PodSpec (Pods and Workload pod set templates).
void projectPodSpec(FieldReader& fr, const Json& spec, schema::PodSpec::Builder out);

}  // namespace ledger::ingest
