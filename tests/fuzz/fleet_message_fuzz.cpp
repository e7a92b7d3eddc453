// libFuzzer target for the fleet consumer's decoder of NATS messages
// (ingest/fleet/shipped_record.h): the input is a message as it arrives,
// its subject on the first line, then "Name: value" header lines up to an
// empty line, then the payload. Aborts when a message decodes whose fields
// disagree with each other (the consumer trusts them after decoding), when
// a Ledger-Signature header decodes to bytes that spell it otherwise, and
// when a signature verifies under the fuzzer's trusted key for cluster "a"
// that is not the one that key makes for that head (Ed25519 signatures are
// deterministic, and OpenSSL accepts only their canonical form); crashes,
// leaks and hangs are the sanitizers' to find.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include <stdlib.h>

#include <memory>

#include "ingest/fleet/head_signature.h"
#include "ingest/fleet/shipped_record.h"

namespace {

// One key pair for the whole run, made in a fresh directory: a.pub makes
// "a" the one cluster the fuzzer's keys trust.
struct FuzzKeys {
  std::unique_ptr<ledger::fleet::SigningKey> signer;
  std::unique_ptr<ledger::fleet::TrustedKeys> trusted;
};

const FuzzKeys& fuzzKeys() {
  static const FuzzKeys keys = [] {
    char dir[] = "/tmp/fleet-message-fuzz-XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    const std::string key = std::string(dir) + "/a";
    ledger::fleet::generateSigningKey(key);
    FuzzKeys k;
    k.signer = std::make_unique<ledger::fleet::SigningKey>(key);
    k.trusted = std::make_unique<ledger::fleet::TrustedKeys>(dir);
    return k;
  }();
  return keys;
}

}  // namespace

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
    const auto header = headers.find(ledger::fleet::kHeaderSignature);
    if (out.signature.has_value() != (header != headers.end())) std::abort();
    if (out.signature) {
      if (ledger::fleet::signatureText(*out.signature) != header->second) std::abort();
      const FuzzKeys& keys = fuzzKeys();
      if (keys.trusted->verify(out.cluster, out.seq, out.chainHash, *out.signature) &&
          (out.cluster != "a" ||
           keys.signer->sign(out.cluster, out.seq, out.chainHash) != *out.signature)) {
        std::abort();
      }
    }
  } else if (error.empty()) {
    std::abort();
  }
  return 0;
}
