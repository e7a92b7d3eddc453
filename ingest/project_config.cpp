// The DRA quota configuration: deviceClassMappings with optional counter and
// capacity sources (Kueue's configapi.DeviceClassMapping). Sources may be
// written {type: Counter, counter: {...}} or just {counter: {...}}.
#include "ingest/project_kinds.h"

namespace ledger::ingest {

namespace {

std::string selectorExpression(const Json& source) {
  JsonPtr expr = FieldReader::path(source, {"deviceSelector", "cel", "expression"});
  return expr.has_value() && expr->is_string() ? expr->get<std::string>() : std::string();
}

}  // namespace

void projectMappings(FieldReader& fr, JsonPtr mappings, schema::DraConfig::Builder out) {
  if (!mappings) return;
  if (!mappings->is_array()) {
    fr.problem("deviceClassMappings is not a list");
    return;
  }
  auto l = out.initMappings(static_cast<unsigned>(mappings->size()));
  unsigned i = 0;
  for (const Json& m : *mappings) {
    auto b = l[i++];
    b.setName(fr.string(m, "name", "deviceClassMappings"));
    if (JsonPtr names = fr.array(m, "deviceClassNames", "deviceClassMappings")) {
      auto nl = b.initDeviceClassNames(static_cast<unsigned>(names->size()));
      unsigned j = 0;
      for (const Json& n : *names)
        nl.set(j++, text(n.is_string() ? n.get<std::string>() : n.dump()));
    }
    JsonPtr sources = fr.array(m, "sources", "deviceClassMappings");
    if (!sources) continue;
    // Keep only sources of a known type, in order.
    std::vector<std::pair<bool, JsonView>> ordered;
    for (const Json& s : *sources) {
      const std::string type = s.is_object() ? s.value("type", std::string()) : std::string();
      if (JsonPtr c = FieldReader::member(s, "counter"); c && (type.empty() || type == "Counter")) {
        ordered.emplace_back(true, *c);
      } else if (JsonPtr c = FieldReader::member(s, "capacity");
                 c && (type.empty() || type == "Capacity")) {
        ordered.emplace_back(false, *c);
      } else {
        fr.problem("deviceClassMappings " + std::string(b.getName().cStr()) +
                   ": a source has neither counter nor capacity");
      }
    }
    auto sl = b.initSources(static_cast<unsigned>(ordered.size()));
    unsigned j = 0;
    for (const auto& [isCounter, src] : ordered) {
      auto sb = sl[j++];
      if (isCounter) {
        auto c = sb.initCounter();
        c.setName(fr.string(src, "name", "counter"));
        c.setDriver(fr.string(src, "driver", "counter"));
        c.setDeviceSelector(selectorExpression(src));
      } else {
        auto c = sb.initCapacity();
        c.setName(fr.string(src, "name", "capacity"));
        c.setDriver(fr.string(src, "driver", "capacity"));
        c.setDeviceSelector(selectorExpression(src));
      }
    }
  }
}

}  // namespace ledger::ingest
