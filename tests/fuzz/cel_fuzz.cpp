// libFuzzer entry point: compiles the input as a device selector and, when it
// compiles, evaluates it against a small fixed device. Any crash, sanitizer
// report, hang or exception escaping the library is a bug; compile and
// evaluation errors are expected outcomes.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined \
//     -Ireplay -Ireplay/cel schema/k8s/quantity.cpp replay/cel/*.cpp tests/fuzz/cel_fuzz.cpp
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "replay/cel/device_selector.h"

namespace {

const ledger::cel::Device& fixedDevice() {
  static const ledger::cel::Device device = [] {
    ledger::cel::Device d;
    d.driver = "gpu.example.com";
    d.allowMultipleAllocations = true;
    auto& attrs = d.attributes["gpu.example.com"];
    attrs["model"] = std::string("H100-SXM");
    attrs["cores"] = std::int64_t{132};
    attrs["ready"] = true;
    attrs["driverVersion"] = *ledger::cel::parseSemver("12.4.1-rc.1+build");
    d.attributes["pci.example.com"]["slot"] = std::int64_t{-3};
    d.capacity["gpu.example.com"]["memory"] = ledger::Quantity::parse("80Gi");
    d.capacity["gpu.example.com"]["cpu"] = ledger::Quantity::parse("1500m");
    return d;
  }();
  return device;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view expression(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto selector = ledger::cel::DeviceSelector::tryCompile(expression, &error);
  if (!selector) return 0;
  const ledger::cel::EvalResult result = selector->evaluate(fixedDevice());
  // The contract: an error never comes with a match.
  if (!result.ok() && result.matched) __builtin_trap();
  return 0;
}
