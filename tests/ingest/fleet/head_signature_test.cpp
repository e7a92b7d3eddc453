// A cluster's signatures (ingest/fleet/head_signature.h): what a signature
// covers, keys in rotation, and the text forms read from the network.
#include "ingest/fleet/head_signature.h"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <filesystem>
#include <fstream>

#include "ingest/fleet/fleet_error.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::fleet;
using ledger::testing::TempDir;

namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a signature covers the cluster, the seq and the chain hash", "[fleet]") {
  TempDir dir;
  generateSigningKey(dir.path("eu-1.key"));
  struct stat st {};
  REQUIRE(stat(dir.path("eu-1.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_THROWS_AS(generateSigningKey(dir.path("eu-1.key")), FleetError);  // never overwritten

  std::filesystem::create_directory(dir.path("keys"));
  std::filesystem::copy_file(dir.path("eu-1.key.pub"), dir.path("keys/eu-1.pub"));
  const TrustedKeys keys(dir.path("keys"));
  CHECK(keys.knows("eu-1"));
  CHECK_FALSE(keys.knows("us-1"));

  const SigningKey key(dir.path("eu-1.key"));
  const Digest hash = Sha256::of("head");
  const Signature sig = key.sign("eu-1", 42, hash);
  CHECK(keys.verify("eu-1", 42, hash, sig));
  CHECK_FALSE(keys.verify("eu-1", 43, hash, sig));
  CHECK_FALSE(keys.verify("eu-1", 42, Sha256::of("other"), sig));
  CHECK_FALSE(keys.verify("us-1", 42, hash, sig));
  Signature flipped = sig;
  flipped[10] ^= 1;
  CHECK_FALSE(keys.verify("eu-1", 42, hash, flipped));
}

TEST_CASE("a cluster's file may hold several keys while one rotates", "[fleet]") {
  TempDir dir;
  generateSigningKey(dir.path("old.key"));
  generateSigningKey(dir.path("new.key"));
  generateSigningKey(dir.path("other.key"));
  std::filesystem::create_directory(dir.path("keys"));
  std::ofstream(dir.path("keys/eu-1.pub"))
      << readAll(dir.path("old.key.pub")) << readAll(dir.path("new.key.pub"));
  const TrustedKeys keys(dir.path("keys"));
  const Digest hash = Sha256::of("head");
  CHECK(keys.verify("eu-1", 1, hash, SigningKey(dir.path("old.key")).sign("eu-1", 1, hash)));
  CHECK(keys.verify("eu-1", 1, hash, SigningKey(dir.path("new.key")).sign("eu-1", 1, hash)));
  CHECK_FALSE(
      keys.verify("eu-1", 1, hash, SigningKey(dir.path("other.key")).sign("eu-1", 1, hash)));
}

TEST_CASE("a trusted keys directory is refused for a bad name or a file without a key", "[fleet]") {
  TempDir dir;
  std::filesystem::create_directory(dir.path("bad-name"));
  std::ofstream(dir.path("bad-name/Not_A_Cluster.pub")) << "x";
  CHECK_THROWS_AS(TrustedKeys(dir.path("bad-name")), FleetError);
  std::filesystem::create_directory(dir.path("empty-file"));
  std::ofstream(dir.path("empty-file/eu-1.pub")) << "not a PEM key\n";
  CHECK_THROWS_AS(TrustedKeys(dir.path("empty-file")), FleetError);
}

TEST_CASE("a signature's text has one spelling", "[fleet]") {
  Signature sig{};
  for (std::size_t i = 0; i < sig.size(); ++i) sig[i] = static_cast<unsigned char>(i * 7);
  const std::string text = signatureText(sig);
  CHECK(text.size() == 88);
  CHECK(signatureFromText(text) == sig);
  CHECK_FALSE(signatureFromText(text.substr(0, 87)));
  CHECK_FALSE(signatureFromText(text + "="));
  std::string bad = text;
  bad[3] = '*';
  CHECK_FALSE(signatureFromText(bad));
  // The last group's unused bits set: the same bytes, another spelling.
  std::string loose = text;
  loose[85] = static_cast<char>(loose[85] == 'A' ? 'B' : loose[85] + 1);
  CHECK_FALSE(signatureFromText(loose));
}
