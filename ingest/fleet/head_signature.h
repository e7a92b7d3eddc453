// The fleet's trust (docs/design.md, "Who may write a cluster's history"):
// each cluster signs its history with its own Ed25519 key, through
// OpenSSL's libcrypto.
//
// A signature covers a cluster's name, a seq and the chain hash at that
// seq (signedHeadText), so it vouches for every record up to that seq: the
// chain binds each record to the hash after it. It proves that the holder of
// the cluster's key wrote that history, not that the history is true.
//
//   SigningKey   a private key (PEM, from `ledger-replay keygen`), signs
//   TrustedKeys  the public keys the fleet trusts: DIR/<cluster>.pub, one or
//                more PEM public keys each (several while a key rotates)
//
// Errors: loading throws FleetError(kConfig) naming the file and what is
// wrong; sign() throws FleetError(kConfig) if libcrypto fails; verify()
// returns false for any signature that does not verify, never throws.
// Ownership: each owns its keys. Thread safety: const members from any
// thread (libcrypto's one-shot contexts are made per call).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/sha256.h"

namespace ledger::fleet {

using Signature = std::array<unsigned char, 64>;

inline constexpr const char* kHeaderSignature = "Ledger-Signature";
// The cursor in a fleet copy holding its head's signature: the seq as its
// position, the signature's text as its resourceVersion.
inline constexpr const char* kHeadSignatureCursor = "fleet:head-signature";

// The bytes a signature covers.
std::string signedHeadText(std::string_view cluster, std::uint64_t seq, const Digest& chainHash);
// Base64 (OpenSSL's encoder), as it travels in a header and in the copy.
std::string signatureText(const Signature& signature);
std::optional<Signature> signatureFromText(std::string_view text);

// Writes a new private key to `path` (PEM, mode 0600, never over an
// existing file) and its public key to path + ".pub".
void generateSigningKey(const std::string& path);

class SigningKey {
 public:
  explicit SigningKey(const std::string& path);
  ~SigningKey();
  SigningKey(const SigningKey&) = delete;
  SigningKey& operator=(const SigningKey&) = delete;
  Signature sign(std::string_view cluster, std::uint64_t seq, const Digest& chainHash) const;

 private:
  struct Key;
  std::unique_ptr<Key> key_;
};

class TrustedKeys {
 public:
  // Every <cluster>.pub in `dir`.
  explicit TrustedKeys(const std::string& dir);
  ~TrustedKeys();
  TrustedKeys(TrustedKeys&&) noexcept;
  TrustedKeys(const TrustedKeys&) = delete;
  TrustedKeys& operator=(const TrustedKeys&) = delete;

  bool knows(std::string_view cluster) const;
  std::vector<std::string> clusters() const;
  // True when one of the cluster's keys made `signature` over the head.
  bool verify(std::string_view cluster, std::uint64_t seq, const Digest& chainHash,
              const Signature& signature) const;

 private:
  struct Keys;
  std::map<std::string, std::unique_ptr<Keys>, std::less<>> keys_;
};

}  // namespace ledger::fleet
