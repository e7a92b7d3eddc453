// libFuzzer target for the fleet consumer's decoder of NATS messages
// (ingest/fleet/shipped_record.h): the input is a message as it arrives,
// its subject on the first line, then "Name: value" header lines up to an
// empty line, then the payload. Aborts when a message decodes whose fields
// disagree with each other (the consumer trusts them after decoding);
// crashes, leaks and hangs are the sanitizers' to find.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "ingest/fleet/shipped_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto line = [&]() {
    const std::size_t nl = input.find('\n');
    std::string_view l = input.substr(0, nl);
    input = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
    return l;
  };
  const std::string subject(line());
  std::map<std::string, std::string, std::less<>> headers;
  while (!input.empty()) {
    const std::string_view l = line();
    if (l.empty()) break;
    const std::size_t colon = l.find(": ");
    if (colon == std::string_view::npos) continue;
    headers[std::string(l.substr(0, colon))] = std::string(l.substr(colon + 2));
  }
  ledger::fleet::ShippedRecord out;
  std::string error;
  const bool ok = ledger::fleet::decodeShippedRecord(
      subject,
      [&](const char* name) -> std::optional<std::string_view> {
        auto it = headers.find(std::string_view(name));
        if (it == headers.end()) return std::nullopt;
        return std::string_view(it->second);
      },
      input, &out, &error);
  if (ok) {
    if (!ledger::fleet::isClusterName(out.cluster) || out.seq == 0 || out.record.seq != out.seq ||
        out.record.timeNs != out.timeNs || out.bytes.data() != input.data()) {
      std::abort();
    }
  } else if (error.empty()) {
    std::abort();
  }
  return 0;
}
