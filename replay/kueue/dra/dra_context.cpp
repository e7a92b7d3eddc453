#include "replay/kueue/dra/dra_context.h"

namespace ledger::replay::dra {

SelectorSet compileSelectors(cel::SelectorCache& cache,
                             const std::vector<std::string>& expressions) {
  SelectorSet set;
  set.expressions = expressions;
  for (std::size_t i = 0; i < expressions.size(); ++i) {
    if (expressions[i].empty()) continue;  // a non-CEL selector: not ours to judge
    const auto& entry = cache.get(expressions[i]);
    if (!entry.selector) {
      if (set.failedIndex < 0) {
        set.failedIndex = static_cast<int>(i);
        set.compileError = entry.error;
      }
      continue;
    }
    set.compiled.push_back(&*entry.selector);
  }
  return set;
}

cel::EvalResult matchSelectors(const SelectorSet& set, const CatalogDevice& device) {
  if (set.compiled.empty()) return cel::EvalResult{true, {}};
  if (!device.inputError.empty()) return cel::EvalResult{false, device.inputError};
  for (const cel::DeviceSelector* s : set.compiled) {
    cel::EvalResult r = s->evaluate(device.celDevice);
    if (!r.ok() || !r.matched) return r;
  }
  return cel::EvalResult{true, {}};
}

std::vector<std::string> textList(capnp::List<capnp::Text>::Reader list) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (auto t : list) out.emplace_back(t.cStr());
  return out;
}

}  // namespace ledger::replay::dra
