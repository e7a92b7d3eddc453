#include "ledger/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace ledger {

namespace {

// Fetched once: OpenSSL 3 looks the algorithm up in its providers on every
// initialisation given EVP_sha256() (an implicit fetch). Never freed; it
// lives as long as the process.
const EVP_MD* sha256Algorithm() {
  static const EVP_MD* md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched != nullptr ? fetched : EVP_sha256();
  }();
  return md;
}

}  // namespace

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  Context() : md(EVP_MD_CTX_new()) {
    if (md == nullptr || EVP_DigestInit_ex(md, sha256Algorithm(), nullptr) != 1) {
      EVP_MD_CTX_free(md);
      throw std::runtime_error("libcrypto: cannot initialise SHA-256");
    }
  }
  ~Context() { EVP_MD_CTX_free(md); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(ctx_->md, data, size) != 1) {
    throw std::runtime_error("libcrypto: SHA-256 update failed");
  }
}

Digest Sha256::finish() {
  Digest out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md, out.data(), &len) != 1 || len != out.size() ||
      EVP_DigestInit_ex(ctx_->md, sha256Algorithm(), nullptr) != 1) {
    throw std::runtime_error("libcrypto: SHA-256 final failed");
  }
  return out;
}

Digest Sha256::of(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.finish();
}

std::string toHex(const Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (std::uint8_t b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

std::optional<Digest> digestFromHex(std::string_view text) {
  // libcrypto reads a string up to its terminator and takes "0X" or colons
  // only with a separator, which '\0' (none) rules out; the length check
  // keeps a longer or shorter text from filling part of a digest.
  if (text.size() != 64) return std::nullopt;
  const std::string terminated(text);
  Digest out{};
  std::size_t written = 0;
  if (OPENSSL_hexstr2buf_ex(out.data(), out.size(), &written, terminated.c_str(), '\0') != 1 ||
      written != out.size()) {
    return std::nullopt;
  }
  return out;
}

}  // namespace ledger
