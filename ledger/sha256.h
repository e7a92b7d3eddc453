// SHA-256 through OpenSSL's libcrypto (EVP interface); no hand-written hashing.
//
// Sha256 is an incremental hasher: a move-only RAII owner of an EVP_MD_CTX.
// Not thread-safe; use one per thread. Throws std::runtime_error only if
// libcrypto itself fails (out of memory), which the ledger treats as fatal.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ledger {

using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // Returns the digest and resets the hasher for reuse.
  Digest finish();

  static Digest of(std::string_view bytes);

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};

std::string toHex(const Digest& digest);
// The digest written as 64 hex digits (either case, nothing else); nullopt
// for anything else. Parsed by libcrypto (OPENSSL_hexstr2buf_ex).
std::optional<Digest> digestFromHex(std::string_view text);

}  // namespace ledger
