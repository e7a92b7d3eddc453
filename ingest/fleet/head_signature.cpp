#include "ingest/fleet/head_signature.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ingest/fleet/fleet_error.h"
#include "ingest/fleet/shipped_record.h"

namespace ledger::fleet {

// Named, not anonymous: the key holders' members have these types
// (GCC's -Wsubobject-linkage in a unity build).
namespace signature_types {
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
}  // namespace signature_types

using signature_types::Pkey;

namespace {
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

[[noreturn]] void fail(const std::string& what) {
  const unsigned long code = ERR_get_error();
  char reason[256] = "";
  if (code != 0) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  throw FleetError(FleetError::Kind::kConfig,
                   what + (code != 0 ? std::string(" (") + reason + ")" : std::string()));
}

std::string pemOf(EVP_PKEY* key, bool isPrivate) {
  Bio bio(BIO_new(BIO_s_mem()));
  const int ok =
      isPrivate ? PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)
                : PEM_write_bio_PUBKEY(bio.get(), key);
  if (!bio || ok != 1) fail("writing a PEM key");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

void writeNewFile(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    throw FleetError(FleetError::Kind::kConfig, "creating " + path + ": " + std::strerror(errno) +
                                                    " (an existing key is kept)");
  }
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed) throw FleetError(FleetError::Kind::kConfig, "writing " + path);
}

bool isEd25519(EVP_PKEY* key) { return EVP_PKEY_id(key) == EVP_PKEY_ED25519; }

}  // namespace

std::string signedHeadText(std::string_view cluster, std::uint64_t seq, const Digest& chainHash) {
  // A fixed prefix: a signature over this text means nothing elsewhere.
  return "kueue-dra-ledger fleet head v1\n" + std::string(cluster) + "\n" + std::to_string(seq) +
         "\n" + toHex(chainHash) + "\n";
}

std::string signatureText(const Signature& signature) {
  std::string out(4 * ((signature.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), signature.data(),
                                static_cast<int>(signature.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<Signature> signatureFromText(std::string_view text) {
  // 64 bytes are 88 characters of base64, the last two '='.
  if (text.size() != 88 || !text.ends_with("==")) return std::nullopt;
  unsigned char out[66];
  const int n = EVP_DecodeBlock(out, reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n != 66) return std::nullopt;
  Signature s;
  std::copy(out, out + s.size(), s.begin());
  if (signatureText(s) != text) return std::nullopt;  // one spelling only
  return s;
}

void generateSigningKey(const std::string& path) {
  Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (!key) fail("generating an Ed25519 key");
  const std::string pub = path + ".pub";
  if (std::filesystem::exists(pub)) {
    throw FleetError(FleetError::Kind::kConfig, pub + " exists (an existing key is kept)");
  }
  writeNewFile(path, pemOf(key.get(), true), 0600);
  writeNewFile(pub, pemOf(key.get(), false), 0644);
}

struct SigningKey::Key {
  Pkey pkey;
};

SigningKey::SigningKey(const std::string& path) : key_(std::make_unique<Key>()) {
  Bio bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) fail("reading the signing key " + path);
  key_->pkey.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key_->pkey) fail(path + " is not a PEM private key");
  if (!isEd25519(key_->pkey.get())) fail(path + " is not an Ed25519 key");
}

SigningKey::~SigningKey() = default;

Signature SigningKey::sign(std::string_view cluster, std::uint64_t seq,
                           const Digest& chainHash) const {
  const std::string text = signedHeadText(cluster, seq, chainHash);
  MdCtx ctx(EVP_MD_CTX_new());
  Signature out;
  std::size_t size = out.size();
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_->pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), out.data(), &size,
                     reinterpret_cast<const unsigned char*>(text.data()), text.size()) != 1 ||
      size != out.size()) {
    fail("signing cluster " + std::string(cluster) + " seq " + std::to_string(seq));
  }
  return out;
}

struct TrustedKeys::Keys {
  std::vector<Pkey> keys;
};

TrustedKeys::TrustedKeys(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::filesystem::path& p = entry.path();
    if (p.extension() != ".pub") continue;
    const std::string cluster = p.stem().string();
    checkClusterName(cluster, ("the trusted key " + p.string() + ": its name").c_str());
    auto keys = std::make_unique<Keys>();
    Bio bio(BIO_new_file(p.c_str(), "r"));
    if (!bio) fail("reading the trusted key " + p.string());
    while (EVP_PKEY* k = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr)) {
      keys->keys.emplace_back(k);
      if (!isEd25519(k)) fail(p.string() + " holds a key that is not Ed25519");
    }
    ERR_clear_error();  // the end of the file reads as an error
    if (keys->keys.empty()) fail(p.string() + " holds no PEM public key");
    keys_.emplace(cluster, std::move(keys));
  }
  if (ec) {
    throw FleetError(FleetError::Kind::kConfig,
                     "reading the trusted keys in " + dir + ": " + ec.message());
  }
}

TrustedKeys::~TrustedKeys() = default;
TrustedKeys::TrustedKeys(TrustedKeys&&) noexcept = default;

bool TrustedKeys::knows(std::string_view cluster) const { return keys_.contains(cluster); }

std::vector<std::string> TrustedKeys::clusters() const {
  std::vector<std::string> out;
  for (const auto& [name, keys] : keys_) out.push_back(name);
  return out;
}

bool TrustedKeys::verify(std::string_view cluster, std::uint64_t seq, const Digest& chainHash,
                         const Signature& signature) const {
  auto it = keys_.find(cluster);
  if (it == keys_.end()) return false;
  const std::string text = signedHeadText(cluster, seq, chainHash);
  for (const Pkey& key : it->second->keys) {
    MdCtx ctx(EVP_MD_CTX_new());
    const bool ok =
        ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) == 1 &&
        EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                         reinterpret_cast<const unsigned char*>(text.data()), text.size()) == 1;
    ERR_clear_error();
    if (ok) return true;
  }
  return false;
}

}  // namespace ledger::fleet
